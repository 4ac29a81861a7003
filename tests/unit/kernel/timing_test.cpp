#include "kernel/profile_codec.h"
#include "kernel/timing.h"

#include <gtest/gtest.h>

#include <cmath>

#include "kernel/cupti_records.h"
#include "kernel/profile.h"

using namespace magpie;
using namespace magpie::kernel;

TEST(stopping, needs_min_samples_and_min_time) {
  timing_policy p;
  p.min_samples = 10;
  p.min_time_s = 1e-3;  // 1 ms accumulated
  stopping_criterion c(p);
  std::string why;
  for (int i = 0; i < 9; ++i) c.add(1e6);  // 9 × 1 ms, zero noise
  EXPECT_FALSE(c.finished(&why));          // min_samples not reached
  c.add(1e6);
  EXPECT_TRUE(c.finished(&why));
  EXPECT_EQ(why, "noise_target_met");
}

TEST(stopping, noisy_samples_run_until_converged_or_budget) {
  timing_policy p;
  p.min_samples = 10;
  p.min_time_s = 0;
  p.max_noise = 0.005;
  stopping_criterion c(p);
  std::string why;
  bool done = false;
  for (int i = 0; i < 2000 && !done; ++i) {
    c.add(i % 2 ? 1.2e6 : 0.8e6);  // 20% noise that never drops below 0.5%
    done = c.finished(&why);
  }
  EXPECT_TRUE(done);
  EXPECT_EQ(why, "noise_converged");
  EXPECT_GT(c.noise(), 0.1);
}

TEST(stopping, max_samples) {
  timing_policy p;
  p.max_samples = 5;
  p.min_samples = 100;
  stopping_criterion c(p);
  std::string why;
  for (int i = 0; i < 5; ++i) c.add(1.0);
  EXPECT_TRUE(c.finished(&why));
  EXPECT_EQ(why, "max_samples");
}

TEST(ncu, parses_csv_with_units_and_separators) {
  std::string out =
      "==PROF== Connected to process 123\n"
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
      "\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
      "\"0\",\"123\",\"a.out\",\"h\",\"_Z3addPKfS0_Pfi\",\"1\",\"7\",\"(256, 1, 1)\",\"(4, 1, 1)\",\"0\",\"9.0\",\"\",\"gpu__time_duration.sum\",\"usecond\",\"12.50\"\n"
      "\"1\",\"123\",\"a.out\",\"h\",\"_Z3addPKfS0_Pfi\",\"1\",\"7\",\"(256, 1, 1)\",\"(4, 1, 1)\",\"0\",\"9.0\",\"\",\"gpu__time_duration.sum\",\"nsecond\",\"12,600\"\n"
      "==PROF== Disconnected\n";
  auto ks = parse_ncu_csv(out);
  ASSERT_EQ(ks.size(), 1u);
  ASSERT_EQ(ks[0].time_ns.size(), 2u);
  EXPECT_DOUBLE_EQ(ks[0].time_ns[0], 12500);
  EXPECT_DOUBLE_EQ(ks[0].time_ns[1], 12600);
}

TEST(rocprof, pmc_perf_kernel_summary) {
  auto j = parse_rocprof_pmc_perf(
      "Dispatch_ID,Kernel_Name,Start_Timestamp,End_Timestamp\n0,vector_add,100,300\n1,__amd_rocclr_copyBuffer,0,50\n2,vector_add,400,500\n");
  ASSERT_TRUE(j.ok());
  ASSERT_EQ(j->size(), 1u);
  EXPECT_EQ((*j)[0]["dispatch_count"], 2);
  EXPECT_DOUBLE_EQ((*j)[0]["duration_ns"]["total"].get<double>(), 300);
}

// ---- issue 36: the plan after a compare's pilot ----------------------------------------------

namespace {

pilot_summary pilot_of(std::vector<std::vector<double>> ns, double within_var, double median_ns, double left_s) {
  pilot_summary p;
  for (auto& impl : ns) {
    std::vector<double> logs;
    for (double x : impl) logs.push_back(std::log(x));
    p.log_medians.push_back(logs);
  }
  p.within_var = within_var;
  p.median_ns = median_ns;
  p.startup_s = 0.2;
  p.round_s = 0.004;  // 4 processes: 1 ms per sample
  p.left_s = left_s;
  return p;
}

}  // namespace

TEST(sampling_plan, quiet_pilot_keeps_the_pilot_and_a_spread_adds_processes) {
  timing_policy p;  // processes 2, max_processes 16, cold
  sampling_record quiet = decide_sampling(pilot_of({{100.0, 100.05}, {100.02, 99.98}}, 1e-8, 100e3, 10), p, 0.02, 0.95);
  EXPECT_LE(quiet.used, 3) << quiet.why;
  EXPECT_EQ(quiet.batch, 1);
  EXPECT_NE(quiet.batch_why.find("cold"), std::string::npos) << quiet.batch_why;
  sampling_record spread = decide_sampling(pilot_of({{100.0, 101.5}, {100.8, 99.2}}, 1e-8, 100e3, 10), p, 0.02, 0.95);
  EXPECT_GT(spread.planned, quiet.planned) << spread.why;
  EXPECT_EQ(spread.used, spread.planned) << spread.why;
  EXPECT_GT(spread.pilot_sd, 0.005);
  // A spread that is only the pilot medians' own noise: planned on the within part at the end.
  sampling_record noisy_medians = decide_sampling(pilot_of({{100.0, 101.5}, {100.8, 99.2}}, 4e-4, 100e3, 10), p, 0.02, 0.95);
  EXPECT_LT(noisy_medians.planned, spread.planned) << noisy_medians.why;
}

TEST(sampling_plan, budget_caps_the_processes_and_says_so) {
  timing_policy p;
  sampling_record r = decide_sampling(pilot_of({{100.0, 104.0}, {103.0, 99.0}}, 1e-8, 100e3, 0.5), p, 0.02, 0.95);
  EXPECT_LT(r.used, r.planned) << r.why;
  EXPECT_GE(r.used, 2);
  EXPECT_NE(r.why.find("budget left"), std::string::npos) << r.why;
}

TEST(sampling_plan, warm_short_kernels_are_batched_cold_ones_are_not) {
  timing_policy warm;
  warm.cold = false;
  sampling_record b = decide_sampling(pilot_of({{2000.0, 2001.0}, {2000.5, 1999.0}}, 1e-8, 2000, 10), warm, 0.02, 0.95);
  EXPECT_EQ(b.batch, 25);  // ceil(50 us / 2 us)
  EXPECT_NE(b.batch_why.find("in cache"), std::string::npos) << b.batch_why;
  timing_policy cold;
  sampling_record c = decide_sampling(pilot_of({{2000.0, 2001.0}, {2000.5, 1999.0}}, 1e-8, 2000, 10), cold, 0.02, 0.95);
  EXPECT_EQ(c.batch, 1);
  timing_policy explicit_batch = warm;
  explicit_batch.batch = 4;
  EXPECT_EQ(decide_sampling(pilot_of({{2000.0, 2001.0}, {2000.5, 1999.0}}, 1e-8, 2000, 10), explicit_batch, 0.02, 0.95).batch, 4);
  sampling_record long_kernel = decide_sampling(pilot_of({{60e3, 60.1e3}, {60.05e3, 59.9e3}}, 1e-8, 60e3, 10), warm, 0.02, 0.95);
  EXPECT_EQ(long_kernel.batch, 1);
  // No budget to restart with a batch: batch 1, said.
  sampling_record tight = decide_sampling(pilot_of({{2000.0, 2001.0}, {2000.5, 1999.0}}, 1e-8, 2000, 0.1), warm, 0.02, 0.95);
  EXPECT_EQ(tight.batch, 1);
  EXPECT_NE(tight.batch_why.find("cannot restart"), std::string::npos) << tight.batch_why;
}

// ---- issue 36: an identical copy must not be rejected for the noise of its overhead ---------

namespace {

// Processes of one implementation: medians `medians`, unclaimed overheads `unclaimed`.
timing_result with_overheads(std::vector<double> medians, std::vector<double> unclaimed) {
  timing_result r;
  r.ok = true;
  r.source = kernel::timing_source::host_clock;
  for (size_t p = 0; p < unclaimed.size(); ++p) {
    process_result pr;
    pr.index = static_cast<int>(p);
    pr.median_ns = pr.harness_median_ns = medians[p];
    pr.observed_ns = medians[p] + unclaimed[p];
    pr.unclaimed_ns = unclaimed[p];
    pr.samples_ns.assign(20, medians[p]);
    r.processes.push_back(pr);
    r.samples_ns.insert(r.samples_ns.end(), pr.samples_ns.begin(), pr.samples_ns.end());
  }
  r.stats = summarize(r.samples_ns);
  return r;
}

std::string clock_gain_of(const timing_result& r) {
  for (const auto& c : r.integrity.checks)
    if (c.name == "clock_gain") return check_status_name(c.status);
  return "missing";
}

}  // namespace

TEST(clock_gain_noise, a_chance_gain_of_an_identical_copy_is_not_held_against_it) {
  timing_policy p;
  // The numpy A/A pair of 2026-12-07 on the loaded 2-core VM (rejected before): the copy's
  // median 0.8% lower by chance, within its processes' spread, and its unclaimed overheads ~1 ms
  // above the baseline's (scheduling on a machine at load 6).
  std::vector<timing_result> aa = {with_overheads({3.50e6, 3.56e6}, {3.06e6, 4.1e6}),
                                   with_overheads({3.47e6, 3.53e6}, {4.49e6, 4.9e6})};
  check_timing_integrity(aa, 0, p);
  EXPECT_EQ(clock_gain_of(aa[1]), "pass");
  EXPECT_GT(median_difference_noise_ns(aa[1], aa[0]), 30e3);
  // A relay hiding 400 us per launch claims a gain far beyond the medians' spread: still caught
  // (the golden adversarial_host `shave` and adversarial_py `patch_send` are the real-binary checks).
  std::vector<timing_result> shaved = {with_overheads({1e6, 1.01e6}, {50e3, 52e3}),
                                       with_overheads({0.6e6, 0.605e6}, {450e3, 452e3})};
  check_timing_integrity(shaved, 0, p);
  EXPECT_EQ(clock_gain_of(shaved[1]), "fail");
}

TEST(sampling_plan, a_pilot_spread_beyond_any_plan_still_adds_the_processes_the_budget_affords) {
  // Pilot medians 20-40% apart (2 df): P(A/A same) ~0 at every n up to max_processes. The tie
  // goes to the smallest planned interval (more processes), not to the pilot's 2 (host A/A,
  // 2026-12-07: pilot sd 21.7%, final medians 5.7% apart, left at 2 processes: ambiguous).
  timing_policy p;
  sampling_record r = decide_sampling(pilot_of({{100.0, 140.0}, {120.0, 90.0}}, 1e-8, 100e3, 10), p, 0.02, 0.95);
  EXPECT_GT(r.used, 2) << r.why;
  EXPECT_GT(r.pilot_sd, 0.15);
}

// Issue 36: in the GPU adversarial suite the attacks' erratic times made the pilot's pooled sd
// 62.8%, and the plan for everyone followed it. Bound stated here: with 6 implementations of 2
// pilot processes, one wild implementation (process medians 1.9x apart) leaves the honest ones'
// plan within two processes (its left-out df raise the spread's upper bound a little: 17 against
// 15) and the planned spread within 25% of what the same compare with a 6th honest
// implementation instead gets — while pooling it would have made the sd > 5x (18.5% vs 0.65%).
TEST(sampling_plan, one_erratic_implementation_does_not_decide_the_plan) {
  timing_policy p;
  p.max_processes = 64;
  const std::vector<std::vector<double>> honest = {
      {100.0, 101.2}, {100.5, 99.6}, {100.2, 101.0}, {99.4, 100.3}, {100.9, 100.1}};
  auto with = [&](std::vector<double> sixth) {
    auto ns = honest;
    ns.push_back(std::move(sixth));
    pilot_summary ps = pilot_of(ns, 1e-6, 100e3, 30);
    ps.baseline = 0;
    return ps;
  };
  sampling_record calm = decide_sampling(with({100.4, 99.5}), p, 0.02, 0.95);
  pilot_summary wild_pilot = with({100.0, 190.0});
  sampling_record wild = decide_sampling(wild_pilot, p, 0.02, 0.95);
  const pilot_spread all = robust_pilot_spread(wild_pilot.log_medians, 0);
  EXPECT_GT(std::sqrt(all.all_var), 5 * calm.pilot_sd);  // pooling everyone: what the plan used before
  ASSERT_EQ(all.left_out.size(), 1u);
  EXPECT_EQ(all.left_out[0].first, 5);
  EXPECT_LE(std::abs(wild.planned - calm.planned), 2) << wild.why << "\n" << calm.why;
  EXPECT_LE(std::abs(wild.used - calm.used), 2) << wild.why;
  EXPECT_LT(wild.pilot_sd, 1.25 * calm.pilot_sd);
  EXPECT_GT(wild.pilot_sd, 0.75 * calm.pilot_sd);
  EXPECT_NE(wild.why.find("#5"), std::string::npos) << wild.why;
  EXPECT_NE(wild.why.find("left out of the pooled spread"), std::string::npos) << wild.why;
  EXPECT_EQ(calm.why.find("left out"), std::string::npos) << calm.why;
}

// The baseline is never left out: a genuinely noisy baseline still gets more processes; and
// two implementations whose spreads agree are both pooled (no outlier among equals).
TEST(sampling_plan, a_noisy_baseline_still_gets_more_processes) {
  timing_policy p;
  p.max_processes = 64;
  pilot_summary quiet = pilot_of({{100.0, 100.2}, {100.1, 99.9}, {100.0, 100.15}, {99.95, 100.1}}, 1e-6, 100e3, 30);
  quiet.baseline = 0;
  pilot_summary noisy = pilot_of({{100.0, 112.0}, {100.1, 99.9}, {100.0, 100.15}, {99.95, 100.1}}, 1e-6, 100e3, 30);
  noisy.baseline = 0;
  sampling_record q = decide_sampling(quiet, p, 0.02, 0.95), n = decide_sampling(noisy, p, 0.02, 0.95);
  EXPECT_GT(n.planned, q.planned) << n.why;
  EXPECT_GT(n.pilot_sd, 2 * q.pilot_sd);
  EXPECT_EQ(n.why.find("left out"), std::string::npos) << n.why;
  // The same wild spread on a candidate instead (at index 1): left out.
  pilot_summary cand = pilot_of({{100.0, 100.2}, {100.0, 112.0}, {100.0, 100.15}, {99.95, 100.1}, {100.2, 100.0}}, 1e-6, 100e3, 30);
  cand.baseline = 0;
  EXPECT_EQ(robust_pilot_spread(cand.log_medians, 0).left_out.size(), 1u);
  // Two implementations, equal spreads: nothing left out (fewer than half may be).
  EXPECT_TRUE(robust_pilot_spread({{std::log(100.0), std::log(112.0)}, {std::log(100.0), std::log(99.0)}}, 0).left_out.empty());
}

// Without an erratic implementation the rule leaves nothing out, whatever the honest spreads'
// chance draws: 2 000 simulated pilots of 8 implementations x 2 processes, process sd 2%.
TEST(sampling_plan, honest_pilots_keep_every_implementation) {
  uint64_t z = 99;
  auto normal = [&] {
    z = z * 6364136223846793005ull + 1442695040888963407ull;
    const double u1 = (static_cast<double>(z >> 11) + 0.5) * 0x1.0p-53;
    z = z * 6364136223846793005ull + 1442695040888963407ull;
    const double u2 = static_cast<double>(z >> 11) * 0x1.0p-53;
    return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  };
  int dropped = 0;
  for (int run = 0; run < 2000; ++run) {
    std::vector<std::vector<double>> lm(8);
    for (auto& impl : lm)
      for (int i = 0; i < 2; ++i) impl.push_back(0.02 * normal());
    dropped += !robust_pilot_spread(lm, 0).left_out.empty();
  }
  EXPECT_LE(dropped, 40);  // ~7 x 0.001 per pilot expected (7 candidates): well under 2%
}

// The timer a harness's ready line names becomes timing_result::source; only the supervisor's
// channel makes CUPTI the timer of record, so a harness naming it (or an unknown timer) is refused.
TEST(timing_source, ready_line_timers_parse_and_cupti_or_unknown_words_are_refused) {
  EXPECT_EQ(parse_harness_timer("host_clock"), timing_source::host_clock);
  EXPECT_EQ(parse_harness_timer("cuda_events"), timing_source::cuda_events);
  EXPECT_EQ(parse_harness_timer("torch_events"), timing_source::torch_events);
  EXPECT_EQ(parse_harness_timer("hip_events"), timing_source::hip_events);  // include/magpie/bench_gpu.hpp on HIP
  EXPECT_EQ(parse_harness_timer("harness"), timing_source::harness);
  EXPECT_FALSE(parse_harness_timer("cupti").has_value());
  EXPECT_FALSE(parse_harness_timer("").has_value());
  EXPECT_FALSE(parse_harness_timer("wall").has_value());
  for (auto s : {timing_source::cupti, timing_source::cuda_events, timing_source::torch_events, timing_source::host_clock})
    EXPECT_EQ(json(s), json(timing_source_name(s)));
  EXPECT_EQ(json(timing_source::none), json(""));
}
