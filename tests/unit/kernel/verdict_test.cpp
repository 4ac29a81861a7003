#include "kernel/verdict.h"
#include "kernel/compare_printer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/stats.h"

using namespace magpie;
using namespace magpie::kernel;

namespace {

// `procs` processes of `n` samples around `center` ns, each process shifted by offsets[p].
impl_samples make(double center, const std::vector<double>& offsets, int n, double noise, uint64_t seed) {
  impl_samples s;
  splitmix64 rng(seed);
  for (double off : offsets) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back(center * (1 + off) * (1 + noise * ((rng.next() % 2001) / 1000.0 - 1)));
    s.processes.push_back(v);
  }
  return s;
}

verdict_input impl(const impl_samples& s) {
  verdict_input v;
  v.correct = v.timed = true;
  v.samples = s;
  return v;
}

}  // namespace

TEST(verdict, t_quantiles) {
  EXPECT_NEAR(t_quantile(0.95, 1), 12.706, 1e-3);
  EXPECT_NEAR(t_quantile(0.95, 2), 4.303, 1e-3);
  EXPECT_NEAR(t_quantile(0.95, 4), 2.776, 0.01);
  EXPECT_NEAR(t_quantile(0.95, 10), 2.228, 0.005);
  EXPECT_NEAR(t_quantile(0.95, 0), 1.960, 1e-3);
}

TEST(verdict, process_effect_widens_the_interval_instead_of_a_false_verdict) {
  compare_policy p;
  // A/A: identical code, but every process carries its own steady 1.5% offset.
  auto a = make(10000, {0.0, 0.015}, 400, 0.002, 1);
  auto b = make(10000, {0.015, 0.0}, 400, 0.002, 2);
  auto v = build_verdicts({impl(a), impl(b)}, 0, p, 7);
  EXPECT_EQ(v[0].verdict, verdict_kind::baseline);
  EXPECT_LE(v[1].ci_low, 1.0);
  EXPECT_GE(v[1].ci_high, 1.0);
  EXPECT_NE(v[1].verdict, verdict_kind::faster);
  EXPECT_NE(v[1].verdict, verdict_kind::slower);
  // Within-process noise alone would have given a narrow interval around the process offsets.
  EXPECT_GT(v[1].ci_high - v[1].ci_low, 0.02);
}

TEST(verdict, aa_without_process_effect_is_same_and_3pct_slower_is_slower) {
  compare_policy p;
  auto base = make(10000, {0, 0}, 300, 0.003, 1);
  auto copy = make(10000, {0, 0}, 300, 0.003, 2);
  auto slow = make(10300, {0, 0}, 300, 0.003, 3);
  auto v = build_verdicts({impl(base), impl(copy), impl(slow)}, 0, p, 9);
  EXPECT_EQ(v[1].verdict, verdict_kind::same) << v[1].reason;
  EXPECT_EQ(v[2].verdict, verdict_kind::slower) << v[2].reason;
  EXPECT_NEAR(v[2].speedup, 1 / 1.03, 0.005);
  EXPECT_EQ(v[2].df, 3);
}

TEST(verdict, implausible_untrusted_and_incorrect) {
  compare_policy p;
  auto base = make(10000, {0, 0}, 200, 0.002, 1);
  auto fast = make(1000, {0, 0}, 200, 0.002, 2);
  verdict_input floor = impl(fast);
  floor.implausible = true;
  floor.floor_ns = 5000;
  verdict_input untrusted = impl(fast);
  untrusted.trusted_timer = false;
  verdict_input wrong = impl(fast);
  wrong.correct = false;
  verdict_input rejected = impl(fast);
  rejected.timed = false;
  rejected.not_timed_reason = "rejected: forged records";
  auto v = build_verdicts({impl(base), floor, untrusted, wrong, rejected}, 0, p, 3);
  EXPECT_EQ(v[1].verdict, verdict_kind::implausible);
  EXPECT_NE(v[1].reason.find("physical floor"), std::string::npos);
  EXPECT_EQ(v[2].verdict, verdict_kind::ambiguous);
  EXPECT_EQ(v[3].verdict, verdict_kind::not_ranked);
  EXPECT_EQ(v[4].verdict, verdict_kind::not_ranked);
  EXPECT_NE(v[4].reason.find("forged"), std::string::npos);
}

// ---- issue 36: band from the measured A/A spread, power, decide, process planning ----------

namespace {

double gauss(splitmix64& rng) {  // Box-Muller
  double u1 = (static_cast<double>(rng.next() >> 11) + 0.5) / 9007199254740992.0;
  double u2 = (static_cast<double>(rng.next() >> 11) + 0.5) / 9007199254740992.0;
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * 3.14159265358979323846 * u2);
}

// `procs` processes of `n` samples; each process's level is center·exp(N(0, sd_between)), its
// samples carry ±noise uniform per-launch noise.
impl_samples random_effects(double center, int procs, double sd_between, int n, double noise, splitmix64& rng) {
  impl_samples s;
  for (int p = 0; p < procs; ++p) {
    const double level = center * std::exp(sd_between * gauss(rng));
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back(level * (1 + noise * ((rng.next() % 2001) / 1000.0 - 1)));
    s.processes.push_back(v);
  }
  return s;
}

struct tally {
  int same = 0, slower = 0, faster = 0, ambiguous = 0, n = 0;
  double power = 0;  // mean power statement
};

tally simulate(double ratio, int procs, double sd_between, int pairs, uint64_t seed) {
  compare_policy p;
  p.bootstrap_resamples = 60;
  splitmix64 rng(seed);
  tally t;
  for (int i = 0; i < pairs; ++i) {
    auto a = random_effects(10000, procs, sd_between, 40, 0.002, rng);
    auto b = random_effects(10000 * ratio, procs, sd_between, 40, 0.002, rng);
    auto v = build_verdicts({impl(a), impl(b)}, 0, p, seed + static_cast<uint64_t>(i));
    ++t.n;
    t.same += v[1].verdict == verdict_kind::same;
    t.slower += v[1].verdict == verdict_kind::slower;
    t.faster += v[1].verdict == verdict_kind::faster;
    t.ambiguous += v[1].verdict == verdict_kind::ambiguous;
    if (v[1].power) t.power += v[1].power->probability;
  }
  t.power /= t.n;
  return t;
}

}  // namespace

TEST(verdict_stats, band_is_the_measured_aa_spread_within_floor_and_ceiling) {
  compare_policy p;  // same_tolerance 0.02
  process_medians quiet{{std::log(100.0), std::log(100.1), std::log(99.9)}, {0, 0, 0}};
  same_band b = choose_band(quiet, p);
  EXPECT_DOUBLE_EQ(b.band, 0.02);
  EXPECT_EQ(b.aa_processes, 3);
  EXPECT_NE(b.basis.find("configured"), std::string::npos) << b.basis;
  process_medians spread{{std::log(100.0), std::log(101.3), std::log(98.7), std::log(100.0)}, {0, 0, 0, 0}};
  b = choose_band(spread, p);
  EXPECT_NEAR(b.band, 2 * b.aa_sd, 1e-12);
  EXPECT_GT(b.band, 0.02);
  EXPECT_LT(b.band, 0.04);
  process_medians wild{{std::log(100.0), std::log(130.0), std::log(75.0)}, {0, 0, 0}};
  b = choose_band(wild, p);
  EXPECT_DOUBLE_EQ(b.band, 0.10);
  EXPECT_NE(b.basis.find("capped"), std::string::npos) << b.basis;
}

TEST(verdict_stats, interval_probabilities_match_simulation) {
  // The estimated se is se·sqrt(χ²_df/df): simulate d and the se estimate directly.
  const double se = 0.008, band = 0.02, conf = 0.95;
  const int df = 10;
  splitmix64 rng(11);
  for (double delta : {0.0, -std::log(1.03), std::log(1.025)}) {
    interval_odds o = interval_probabilities(delta, se, df, band, conf);
    int same = 0, slower = 0, faster = 0;
    const int n = 40000;
    const double t = t_quantile(conf, df), t_same = t_quantile(2 * conf - 1, df);
    for (int i = 0; i < n; ++i) {
      double d = delta + se * gauss(rng), x = 0;
      for (int k = 0; k < df; ++k) x += std::pow(gauss(rng), 2);
      double h = t * se * std::sqrt(x / df);
      slower += d + h < std::log1p(-band);
      faster += d - h > std::log1p(band);
      const double hs = t_same * se * std::sqrt(x / df);
      same += d - hs >= std::log1p(-band) && d + hs <= std::log1p(band);
    }
    EXPECT_NEAR(o.same, same / static_cast<double>(n), 0.01) << delta;
    EXPECT_NEAR(o.slower, slower / static_cast<double>(n), 0.01) << delta;
    EXPECT_NEAR(o.faster, faster / static_cast<double>(n), 0.01) << delta;
  }
}

TEST(verdict_stats, planning_grows_processes_with_the_between_process_spread) {
  process_plan quiet = plan_processes(0.002, 2, 2, 32, 0.02, 0.02, 0.95);
  process_plan noisy = plan_processes(0.012, 2, 2, 32, 0.024, 0.02, 0.95);
  process_plan wild = plan_processes(0.08, 2, 2, 16, 0.10, 0.02, 0.95);
  EXPECT_LE(quiet.processes, 4) << quiet.why;
  EXPECT_GE(quiet.aa_same, k_target_same);
  EXPECT_GT(noisy.processes, quiet.processes) << noisy.why;
  EXPECT_GE(noisy.aa_same, k_target_same) << noisy.why;
  EXPECT_LE(noisy.processes, 12) << noisy.why;
  EXPECT_EQ(wild.processes, 16);
  EXPECT_NE(wild.why.find("capped"), std::string::npos) << wild.why;
}

TEST(verdict_stats, aa_is_same_at_least_95_percent_with_planned_processes) {
  // Identical code; every process carries its own level, sd 1.2% (the H200's LayerNorm-like case).
  const double sd = 0.012;
  process_plan plan = plan_processes(sd, 2, 2, 32, std::max(0.02, 2 * sd), 0.02, 0.95);
  tally t = simulate(1.0, plan.processes, sd, 300, 101);
  EXPECT_GE(t.same, static_cast<int>(0.95 * t.n)) << plan.why << " same " << t.same << "/" << t.n << " ambiguous "
                                                   << t.ambiguous << " slower " << t.slower << " faster " << t.faster;
  EXPECT_EQ(t.slower + t.faster, 0);
  // At two processes (the old default) the same spread is mostly ambiguous: the failure the issue reports.
  tally two = simulate(1.0, 2, sd, 200, 202);
  EXPECT_LT(two.same, static_cast<int>(0.8 * two.n)) << two.same;
}

TEST(verdict_stats, three_percent_slower_is_called_and_power_matches_simulation) {
  const double sd = 0.004;
  process_plan plan = plan_processes(sd, 2, 2, 32, 0.02, 0.02, 0.95);
  tally t = simulate(1.03, plan.processes, sd, 300, 303);
  EXPECT_GE(t.slower, static_cast<int>(0.8 * t.n)) << plan.why << " slower " << t.slower << "/" << t.n;
  EXPECT_EQ(t.faster + t.same, 0);
  // The power statement (computed from each interval's own se and df) predicts the rate.
  EXPECT_NEAR(t.power, t.slower / static_cast<double>(t.n), 0.12) << plan.why;
  // Fewer processes: lower power, and the statement says so.
  tally few = simulate(1.03, 2, 0.01, 200, 404);
  EXPECT_LT(few.slower, t.slower);
  EXPECT_NEAR(few.power, few.slower / static_cast<double>(few.n), 0.15);
}

TEST(verdict_stats, ambiguous_says_what_would_decide_it) {
  compare_policy p;
  splitmix64 rng(5);
  auto a = random_effects(10000, 2, 0.015, 40, 0.002, rng);
  auto b = random_effects(10100, 2, 0.015, 40, 0.002, rng);
  auto v = build_verdicts({impl(a), impl(b)}, 0, p, 3);
  ASSERT_EQ(v[1].verdict, verdict_kind::ambiguous) << v[1].reason;
  EXPECT_NE(v[1].decide.find("processes per implementation"), std::string::npos) << v[1].decide;
  ASSERT_TRUE(v[1].band && v[1].power);
  EXPECT_LT(v[1].power->probability, 0.5);
  json j = verdict_json(v[1], "b", 0.95, 10100);
  EXPECT_TRUE(j["decide"].is_string());
  EXPECT_TRUE(j["same_band"].is_object());
  EXPECT_TRUE(j["power"]["statement"].get<std::string>().find("3% difference would have been detected") != std::string::npos);
  EXPECT_TRUE(verdict_json(v[0], "a", 0.95, 10000)["power"].is_null());
}

// Issue 36 (CPU A/A under load): processes sampled in the same rounds share each round's load.
// `procs` processes per implementation, `rounds` samples each; in a round, every process of every
// implementation is slowed by the same factor (2.2x in 48% of rounds: a build running), plus 3%
// noise of its own.
namespace {
std::vector<impl_samples> shared_load(const std::vector<double>& levels, int procs, int rounds, uint64_t seed) {
  splitmix64 rng(seed);
  std::vector<impl_samples> out(levels.size());
  for (auto& s : out) s.processes.assign(static_cast<size_t>(procs), {});
  for (int r = 0; r < rounds; ++r) {
    const double load = rng.below(100) < 48 ? 2.2 : 1.0;
    for (size_t k = 0; k < levels.size(); ++k)
      for (auto& p : out[k].processes) p.push_back(levels[k] * load * (1 + 0.03 * ((rng.next() % 2001) / 1000.0 - 1)));
  }
  return out;
}
}  // namespace

TEST(verdict_stats, load_shared_by_a_round_gives_no_false_difference) {
  compare_policy p;
  int same = 0, slower = 0, n = 0;
  double boot = 0, spread = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto s = shared_load({3.5e6, 3.5e6, 3.5e6 * 1.06}, 6, 60, seed);
    auto v = build_verdicts({impl(s[0]), impl(s[1]), impl(s[2])}, 0, p, seed);
    EXPECT_NE(v[1].verdict, verdict_kind::faster) << v[1].reason;
    EXPECT_NE(v[1].verdict, verdict_kind::slower) << v[1].reason;
    EXPECT_NE(v[2].verdict, verdict_kind::faster) << v[2].reason;
    same += v[1].verdict == verdict_kind::same;
    slower += v[2].verdict == verdict_kind::slower;
    ++n;
    process_medians pm = summarize_processes(s[0], 200, 3);
    boot += mean(pm.within_var);
    spread += std::pow(stdev(pm.log_median), 2);
  }
  // The medians' bootstrap variance (samples taken as independent) is far above their spread:
  // it counts the shared load, which cancels in the ratio (the interval once added it).
  EXPECT_GT(boot, 10 * spread) << boot / n << " vs " << spread / n;
  // The bootstrap floor keeps such intervals wide (docs/statistics.md: without it, two processes
  // a side called an identical copy `slower` under load): no false difference, and the 6%
  // slower copy is never called faster.
  RecordProperty("aa_same", same);
  RecordProperty("six_percent_slower_called", slower);
}

// The same runs with each sample's round known (as the interleaved sampler records it): the
// floor is the medians' noise without the load every process shared in a round. Identical code
// is now `same`, and the 6%-slower copy is never `same` nor `faster`; a 10%-slower one (the CPU
// acceptance's difference) is never `same`.
TEST(verdict_stats, rounds_known_take_the_shared_load_out_of_the_floor) {
  compare_policy p;
  int same = 0, slower6 = 0, slower10 = 0, n = 0;
  double boot = 0, adj = 0, spread = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto s = shared_load({3.5e6, 3.5e6, 3.5e6 * 1.06, 3.5e6 * 1.10}, 6, 60, seed);
    for (auto& x : s)
      for (const auto& proc : x.processes) {
        x.rounds.emplace_back();
        for (size_t r = 0; r < proc.size(); ++r) x.rounds.back().push_back(static_cast<int>(r));
      }
    auto v = build_verdicts({impl(s[0]), impl(s[1]), impl(s[2]), impl(s[3])}, 0, p, seed);
    EXPECT_NE(v[1].verdict, verdict_kind::faster) << v[1].reason;
    EXPECT_NE(v[1].verdict, verdict_kind::slower) << v[1].reason;
    EXPECT_NE(v[2].verdict, verdict_kind::faster) << v[2].reason;
    EXPECT_NE(v[2].verdict, verdict_kind::same) << v[2].reason;
    EXPECT_NE(v[3].verdict, verdict_kind::same) << v[3].reason;
    EXPECT_NE(v[3].verdict, verdict_kind::faster) << v[3].reason;
    same += v[1].verdict == verdict_kind::same;
    slower6 += v[2].verdict == verdict_kind::slower;
    slower10 += v[3].verdict == verdict_kind::slower;
    ++n;
    boot += mean(summarize_processes(s[0], 200, 3).within_var);
    process_medians pa = summarize_processes(without_round_effects({&s[0], &s[1], &s[2], &s[3]})[0], 200, 3);
    adj += mean(pa.within_var);
    spread += std::pow(stdev(pa.log_median), 2);
  }
  // Adjusted, the bootstrap variance is of the order of the medians' spread, not 10x above it.
  EXPECT_LT(adj, 3 * spread + 1e-6) << adj / n << " vs " << spread / n;
  EXPECT_LT(adj * 10, boot);
  EXPECT_GE(same, 19) << "A/A same in " << same << " of 20";
  // A 10% difference under this load is called: the unadjusted floor still holds the call back
  // only where the raw samples cannot carry it.
  RecordProperty("aa_same", same);
  RecordProperty("six_percent_slower_called", slower6);
  RecordProperty("ten_percent_slower_called", slower10);
}

// A process persistently ~2x slow (heavy-tailed process effect, the 0.61x numpy case) with two
// processes a side and rounds known: the adjusted floor is small, but a difference must also
// stand against the unadjusted one, so no `slower` is called for identical code.
TEST(verdict_stats, a_difference_must_stand_against_the_unadjusted_floor) {
  compare_policy p;
  splitmix64 rng(7);
  impl_samples a, b;
  for (int i = 0; i < 2; ++i) {
    a.processes.emplace_back();
    b.processes.emplace_back();
    a.rounds.emplace_back();
    b.rounds.emplace_back();
  }
  for (int r = 0; r < 60; ++r) {
    const double load = rng.below(100) < 48 ? 2.2 : 1.0;
    for (int i = 0; i < 2; ++i) {
      a.processes[static_cast<size_t>(i)].push_back(4.4e6 * load * (1 + 0.03 * ((rng.next() % 2001) / 1000.0 - 1)));
      b.processes[static_cast<size_t>(i)].push_back((i ? 7.7e6 : 6.7e6) * load * (1 + 0.03 * ((rng.next() % 2001) / 1000.0 - 1)));
      a.rounds[static_cast<size_t>(i)].push_back(r);
      b.rounds[static_cast<size_t>(i)].push_back(r);
    }
  }
  auto v = build_verdicts({impl(a), impl(b)}, 0, p, 7);
  EXPECT_EQ(v[1].verdict, verdict_kind::ambiguous) << v[1].reason;
  EXPECT_NE(v[1].reason.find("held back"), std::string::npos) << v[1].reason;
  EXPECT_NE(v[1].decide.find("more processes"), std::string::npos) << v[1].decide;
}

// From k_df_spread_trusted pooled df on, the interval for `same` is the process medians' spread
// alone; a real 10% difference (the CPU acceptance's) must still not come out `same`, 8 processes a
// side of 12 samples: with the band below 10% (process sd 2%, ±5% per launch) never; with the
// loaded VM's numpy noise (±60% per launch: medians spread ~12%, the band at its 10% ceiling) at
// most TOST's 5% at the band's edge.
TEST(verdict_stats, spread_alone_at_enough_df_never_calls_ten_percent_same) {
  compare_policy p;
  p.bootstrap_resamples = 60;
  struct config {
    double sd, noise;
    int max_same10;
    const char* name;
  };
  const int runs = 200;
  for (const config& c : {config{0.02, 0.05, 0, "quiet"}, config{0.03, 0.6, runs / 20, "loaded"},
                          config{0.06, 0.6, runs / 20, "loaded_sd6"}}) {
    splitmix64 rng(static_cast<uint64_t>(c.sd * 1000 + c.noise * 100));
    int same10 = 0, same_aa = 0, wrong = 0;
    for (int r = 0; r < runs; ++r) {
      auto a = random_effects(3.5e6, 8, c.sd, 12, c.noise, rng);
      auto b = random_effects(3.5e6, 8, c.sd, 12, c.noise, rng);
      auto d = random_effects(3.5e6 * 1.10, 8, c.sd, 12, c.noise, rng);
      auto v = build_verdicts({impl(a), impl(b), impl(d)}, 0, p, static_cast<uint64_t>(r));
      EXPECT_GE(v[1].df, k_df_spread_trusted);
      same_aa += v[1].verdict == verdict_kind::same;
      same10 += v[2].verdict == verdict_kind::same;
      wrong += v[1].verdict == verdict_kind::faster || v[1].verdict == verdict_kind::slower || v[2].verdict == verdict_kind::faster;
    }
    EXPECT_LE(same10, c.max_same10) << c.name;
    EXPECT_EQ(wrong, 0) << c.name;
    RecordProperty(std::string("aa_same_") + c.name, same_aa);
    RecordProperty(std::string("ten_percent_same_") + c.name, same10);
  }
}

// Issue 36 part 4: what makes identical numpy processes bimodal on the shared 2-core VM is time
// sharing — a process whose CPU another session's compute-bound process shares runs at ~2x its
// CPU time (wall 8 ms for 4 ms of CPU) for as long as that placement lasts, often its whole life
// (docs/statistics.md). Simulated: each process independently time-shared with probability q
// (2x for its whole life), 2% process sd otherwise, ±60% per sample, 8-14 processes of 12-20
// samples. Over 200 compares per case: a copy really 10% slower is never `same`; a false
// difference (identical code faster / slower, or the slower copy faster) at most once — measured
// 1, 1 and 0 of 200: the tail of a 2x mixture with ~17% noise per process median, not 0 (a check
// on the median processes was tried and changed none of them). A/A is `same` 0 of 200 here.
TEST(verdict_stats, time_shared_processes_never_make_a_difference_or_hide_ten_percent) {
  compare_policy p;
  p.bootstrap_resamples = 60;
  auto bimodal = [](double center, int procs, double q, int n, splitmix64& rng) {
    impl_samples s;
    for (int i = 0; i < procs; ++i) {
      const bool shared = static_cast<double>(rng.next() % 10000) < q * 10000;
      const double level = center * std::exp(0.02 * gauss(rng)) * (shared ? 2.0 : 1.0);
      std::vector<double> v;
      for (int k = 0; k < n; ++k) v.push_back(level * (1 + 0.6 * ((rng.next() % 2001) / 1000.0 - 1)));
      s.processes.push_back(v);
    }
    return s;
  };
  const int runs = 200;
  for (double q : {0.1, 0.25, 0.4}) {
    splitmix64 rng(static_cast<uint64_t>(q * 1000) + 7);
    int wrong = 0, same10 = 0, same_aa = 0;
    for (int r = 0; r < runs; ++r) {
      const int procs = 8 + static_cast<int>(rng.next() % 7), n = 12 + static_cast<int>(rng.next() % 9);
      auto a = bimodal(4e6, procs, q, n, rng);
      auto b = bimodal(4e6, procs, q, n, rng);
      auto d = bimodal(4e6 * 1.10, procs, q, n, rng);
      auto v = build_verdicts({impl(a), impl(b), impl(d)}, 0, p, static_cast<uint64_t>(r));
      const bool bad = v[1].verdict == verdict_kind::faster || v[1].verdict == verdict_kind::slower ||
                       v[2].verdict == verdict_kind::faster;
      wrong += bad;
      same10 += v[2].verdict == verdict_kind::same;
      same_aa += v[1].verdict == verdict_kind::same;
    }
    EXPECT_LE(wrong, 1) << "q " << q;  // measured: 1, 1, 0 of 200 (q 0.1, 0.25, 0.4)
    EXPECT_EQ(same10, 0) << "q " << q;
    std::printf("q %.2f: false differences %d of %d, 10%% slower same %d, A/A same %d\n", q, wrong, runs, same10, same_aa);
    RecordProperty("aa_same_q" + std::to_string(static_cast<int>(q * 100)), same_aa);
  }
}
