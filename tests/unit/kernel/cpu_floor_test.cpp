// cpu_floor (timing_checks.cpp, issue 35): on the host clock a sample took at least the CPU time
// its busiest live thread used (or the tree's over every online CPU), less the harness's own
// per-sample work, which the baseline's same figure allows. Made-up results shaped like golden
// adversarial_host's (2 processes, loaded 2-core VM): baseline ~0.7 ms a launch, ~0.4 ms of
// channel work (the output copy) beyond it on the busiest thread.
#include <gtest/gtest.h>

#include <cmath>

#include "kernel/harness_protocol.h"
#include "kernel/timing.h"
#include "timing_fakes.h"

using namespace magpie;
using namespace magpie::kernel;
using namespace magpie::kernel::timing_fakes;

namespace {

// `record_ns` a launch; each process's busiest thread used `excess_ns` more CPU per launch.
timing_result floored(double record_ns, double excess_ns) {
  timing_result r = fake(record_ns, 0, 0);
  for (auto& p : r.processes) {
    p.cpu_floor_excess.assign(20, excess_ns);
    p.cpu_floor_excess_ns = excess_ns;
  }
  return r;
}

}  // namespace

TEST(cpu_floor, rejects_reported_times_below_the_cpu_time_of_the_kernel_thread) {
  timing_policy p;
  // An honest candidate: the same channel work as the baseline's (seen: within ±110 us of it).
  std::vector<timing_result> honest = {floored(0.7e6, 0.40e6), floored(0.43e6, 0.45e6)};
  check_timing_integrity(honest, 0, p);
  EXPECT_EQ(status_of(honest[1], "cpu_floor"), check_status::pass);
  // shave: the relay reports 0.6 of 0.7 ms; its kernel thread still burns 0.7 ms a launch, so
  // 0.28 ms of that CPU is beyond the claim — however the supervisor's clock is inflated by load.
  std::vector<timing_result> shaved = {floored(0.7e6, 0.40e6), floored(0.42e6, 0.40e6 + 0.28e6)};
  check_timing_integrity(shaved, 0, p);
  EXPECT_EQ(status_of(shaved[1], "cpu_floor"), check_status::fail);
  EXPECT_TRUE(shaved[1].integrity.rejected());
  // A threaded honest kernel: its busiest thread used less than its wall time (negative excess).
  std::vector<timing_result> threads = {floored(0.7e6, 0.40e6), floored(1.2e6, -0.76e6)};
  check_timing_integrity(threads, 0, p);
  EXPECT_EQ(status_of(threads[1], "cpu_floor"), check_status::pass);
}

TEST(cpu_floor, a_baseline_that_waits_off_the_cpu_allows_no_less_than_nothing) {
  timing_policy p;
  // Launches that sleep 4 ms (baseline) and 1.5 ms: each thread's CPU time is far below its wall
  // time, the excess negative; the faster one is not hiding work.
  std::vector<timing_result> sleepy = {floored(4e6, -3.95e6), floored(1.5e6, -1.45e6)};
  check_timing_integrity(sleepy, 0, p);
  EXPECT_EQ(status_of(sleepy[1], "cpu_floor"), check_status::pass);
  // Against such a baseline a claim below the CPU time used still fails (allowance 0).
  std::vector<timing_result> shaved = {floored(4e6, -3.95e6), floored(0.9e6, 0.6e6 + 0.5e6)};
  check_timing_integrity(shaved, 0, p);
  EXPECT_EQ(status_of(shaved[1], "cpu_floor"), check_status::fail);
}

TEST(cpu_floor, only_on_the_host_clock_and_only_when_the_threads_were_read) {
  timing_policy p;
  // A GPU timer's host thread spins or sleeps in synchronisation: no floor (not even made).
  std::vector<timing_result> gpu = {floored(0.7e6, 0.40e6), floored(0.42e6, 5e6)};
  gpu[1].source = timing_source::cuda_events;
  check_timing_integrity(gpu, 0, p);
  EXPECT_EQ(status_of(gpu[1], "cpu_floor"), check_status::skipped);
  // Not read (NaN): skipped, never a pass.
  std::vector<timing_result> unread = {floored(0.7e6, 0.40e6), fake(0.42e6, 0, 0)};
  check_timing_integrity(unread, 0, p);
  EXPECT_EQ(status_of(unread[1], "cpu_floor"), check_status::skipped);
}

TEST(cpu_floor, another_harness_than_the_baselines_gets_its_channel_work_allowed_again) {
  timing_policy p;
  std::vector<timing_result> py = {floored(0.7e6, 0.40e6), floored(0.6e6, 0.40e6 + 0.3e6)};
  py[0].ready = ready_line{};
  py[0].ready->harness = "magpie_bench.hpp";
  py[1].ready = ready_line{};
  py[1].ready->harness = "magpie_bench";
  check_timing_integrity(py, 0, p);
  EXPECT_EQ(status_of(py[1], "cpu_floor"), check_status::pass);
  for (auto& q : py[1].processes) q.cpu_floor_excess.assign(20, 0.40e6 + 1.2e6);
  check_timing_integrity(py, 0, p);
  EXPECT_EQ(status_of(py[1], "cpu_floor"), check_status::fail);
}
