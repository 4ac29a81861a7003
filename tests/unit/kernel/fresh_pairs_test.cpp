// Fresh samples compared with their partners (kernel/timing.h fresh_pair, issue 35 part 6): the
// repeated sample each process runs right before a fresh sample's `inputs`. input_reuse and
// fresh_overhead (timing_checks.cpp) on made-up pairs shaped like golden adversarial_host's.
#include <gtest/gtest.h>

#include <cmath>

#include "kernel/timing.h"
#include "timing_fakes.h"

using namespace magpie;
using namespace magpie::kernel;

namespace {

// A host-clock result of `record_ns` per sample with `n` pairs: fresh/partner time of record and
// the tree's CPU time during each `sample` command (ns per launch).
timing_result paired(double record_ns, int n, double fresh_ns, double partner_ns, double fresh_cpu, double partner_cpu) {
  timing_result r = timing_fakes::fake(record_ns, 0, 0);
  for (int i = 0; i < n; ++i) {
    fresh_pair q;
    q.fresh_ns = fresh_ns;
    q.partner_ns = partner_ns;
    q.fresh_cpu_ns = fresh_cpu;
    q.partner_cpu_ns = partner_cpu;
    q.fresh_bracket_ns = fresh_ns + 300e3;
    q.partner_bracket_ns = partner_ns + 300e3;
    r.pairs.push_back(q);
    r.fresh_ns.push_back(fresh_ns);
    r.fresh_extra_ns.push_back(0);
  }
  r.reused_ns.assign(30, partner_ns);
  return r;
}

}  // namespace

TEST(fresh_pairs, input_reuse_accepts_a_threaded_kernel_that_waits_for_a_core_after_the_inputs) {
  timing_policy p;
  const timing_result base = paired(0.8e6, 6, 0.8e6, 0.8e6, 1.4e6, 1.4e6);
  // CI and golden adversarial_host under load: a launch that starts a thread took 3.8 ms on fresh
  // samples against 0.75 ms on their partners, its CPU time 1.65 against 1.5 ms (waiting, not work).
  timing_result threads = paired(0.9e6, 5, 3.8e6, 0.75e6, 1.65e6, 1.5e6);
  std::vector<timing_result> r = {base, threads};
  check_timing_integrity(r, 0, p);
  EXPECT_EQ(timing_fakes::status_of(r[1], "input_reuse"), check_status::pass);
  // Against all repeated samples and without the CPU time (the rule before the pairs) it failed.
  std::vector<timing_result> unpaired = {base, threads};
  unpaired[1].pairs.clear();
  check_timing_integrity(unpaired, 0, p);
  EXPECT_EQ(timing_fakes::status_of(unpaired[1], "input_reuse"), check_status::fail);
}

TEST(fresh_pairs, input_reuse_rejects_work_done_only_where_a_sample_can_be_checked) {
  timing_policy p;
  const timing_result base = paired(0.8e6, 6, 0.8e6, 0.8e6, 1.1e6, 1.1e6);
  // check_sniff: the whole work after fresh inputs, 55% otherwise (the output copy in both CPU times).
  timing_result sniff = paired(0.5e6, 6, 0.9e6, 0.5e6, 1.2e6, 0.95e6);
  // memo_content: nothing done while the inputs repeat.
  timing_result memo = paired(1e3, 6, 0.8e6, 1e3, 1.1e6, 0.3e6);
  // A GPU-timed kernel is judged on its time of record alone (the CPU does not see GPU work).
  timing_result gpu = paired(0.5e6, 6, 0.9e6, 0.5e6, 0.2e6, 0.2e6);
  gpu.source = kernel::timing_source::cuda_events;
  // The same with a large output copy in both CPU times: 1.08x the partner's CPU time, but the CPU
  // time explains 37% of the slowdown (a CPU-ratio bound of 1.15 let it through).
  timing_result diluted = paired(0.5e6, 6, 0.9e6, 0.5e6, 2.0e6, 1.85e6);
  std::vector<timing_result> r = {base, sniff, memo, gpu, diluted};
  check_timing_integrity(r, 0, p);
  EXPECT_EQ(timing_fakes::status_of(r[4], "input_reuse"), check_status::fail);
  EXPECT_EQ(timing_fakes::status_of(r[1], "input_reuse"), check_status::fail);
  EXPECT_EQ(timing_fakes::status_of(r[2], "input_reuse"), check_status::fail);
  EXPECT_EQ(timing_fakes::status_of(r[3], "input_reuse"), check_status::fail);
  // A pair or two slower is load, not a pattern: most pairs must be.
  timing_result few = paired(0.8e6, 6, 0.8e6, 0.8e6, 1.1e6, 1.1e6);
  few.pairs[0].fresh_ns = few.pairs[1].fresh_ns = 5e6;
  few.pairs[0].fresh_cpu_ns = few.pairs[1].fresh_cpu_ns = 5e6;
  std::vector<timing_result> f = {base, few};
  check_timing_integrity(f, 0, p);
  EXPECT_EQ(timing_fakes::status_of(f[1], "input_reuse"), check_status::pass);
}

TEST(fresh_pairs, fresh_overhead_rejects_work_after_the_timer_on_fresh_samples_only) {
  timing_policy p;
  const timing_result base = paired(0.8e6, 6, 0.8e6, 0.85e6, 1.1e6, 1.15e6);
  // relay.cpp fresh_overtime: claims 200 us everywhere (spun: 0.5 ms of CPU with the output copy),
  // and on fresh samples computes the answer (~0.7 ms) after the claim, before the reply.
  timing_result overtime = paired(0.2e6, 6, 0.2e6, 0.2e6, 1.2e6, 0.5e6);
  // Honest: a thread waiting for a core on fresh samples (the claim grew, the CPU barely did);
  // a kernel whose fresh samples run slower from cold caches (CPU and claim grew together).
  timing_result waits = paired(0.9e6, 6, 3.8e6, 0.75e6, 1.65e6, 1.5e6);
  timing_result cold = paired(3e6, 6, 3.4e6, 3e6, 3.7e6, 3.3e6);
  std::vector<timing_result> r = {base, overtime, waits, cold};
  check_timing_integrity(r, 0, p);
  EXPECT_EQ(timing_fakes::status_of(r[1], "fresh_overhead"), check_status::fail);
  EXPECT_TRUE(r[1].integrity.rejected());
  EXPECT_EQ(timing_fakes::status_of(r[2], "fresh_overhead"), check_status::pass);
  EXPECT_EQ(timing_fakes::status_of(r[3], "fresh_overhead"), check_status::pass);
  // The same attack timed on a GPU: the supervisor's clock around the samples shows it.
  timing_result gbase = base, gover = overtime;
  gbase.source = gover.source = kernel::timing_source::cuda_events;
  for (auto& q : gover.pairs) q.fresh_bracket_ns += 0.7e6;
  std::vector<timing_result> g = {gbase, gover};
  check_timing_integrity(g, 0, p);
  EXPECT_EQ(timing_fakes::status_of(g[1], "fresh_overhead"), check_status::fail);
  // Too few pairs: skipped, never failed.
  timing_result short_run = overtime;
  short_run.pairs.resize(2);
  std::vector<timing_result> s = {base, short_run};
  check_timing_integrity(s, 0, p);
  EXPECT_EQ(timing_fakes::status_of(s[1], "fresh_overhead"), check_status::skipped);
}
