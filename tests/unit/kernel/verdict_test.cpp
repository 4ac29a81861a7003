#include "kernel/verdict.h"

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
