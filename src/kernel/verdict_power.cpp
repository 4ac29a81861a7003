// The 'same' band, the power statement, the `decide` line and the number of processes per
// implementation (kernel/verdict.h; docs/statistics.md explains the choices and their numbers).
#include <algorithm>
#include <cmath>

#include "core/stats.h"
#include "core/strings.h"
#include "kernel/verdict.h"

namespace magpie::kernel {

namespace {

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// E[f(s)] where s = sqrt(X/df), X ~ chi-square(df): the ratio of an estimated standard error to
// the true one. Midpoint rule over u = sqrt(X) (smooth for df >= 1); df <= 0: s = 1 exactly.
template <typename F>
double over_se_estimate(int df, F f) {
  if (df <= 0) return f(1.0);
  const double k = df, top = std::sqrt(k + 12 * std::sqrt(2 * k) + 30);
  const int n = 600;
  const double du = top / n, log_norm = (k / 2) * std::log(2.0) + std::lgamma(k / 2);
  double acc = 0, mass = 0;
  for (int i = 0; i < n; ++i) {
    const double u = (i + 0.5) * du;
    // density of U = sqrt(X): 2u · f_X(u²)
    const double w = std::exp(std::log(2.0) + (k - 1) * std::log(u) - u * u / 2 - log_norm) * du;
    acc += w * f(u / std::sqrt(k));
    mass += w;
  }
  return mass > 0 ? acc / mass : f(1.0);
}

}  // namespace

interval_odds interval_probabilities(double delta, double se, int df, double band, double confidence) {
  interval_odds o;
  if (!(se > 0)) {
    const double lo = std::log1p(-band), hi = std::log1p(band);
    o.slower = delta < lo;
    o.faster = delta > hi;
    o.same = !o.slower && !o.faster;
    return o;
  }
  const double t = t_quantile(confidence, df), lo = std::log1p(-band), hi = std::log1p(band);
  o.slower = over_se_estimate(df, [&](double s) { return normal_cdf((lo - t * se * s - delta) / se); });
  o.faster = over_se_estimate(df, [&](double s) { return 1 - normal_cdf((hi + t * se * s - delta) / se); });
  const double t_same = t_quantile(2 * confidence - 1, df);  // TOST (verdict.cpp classify)
  o.same = over_se_estimate(df, [&](double s) {
    const double h = t_same * se * s;
    if (lo + h >= hi - h) return 0.0;
    return std::max(0.0, normal_cdf((hi - h - delta) / se) - normal_cdf((lo + h - delta) / se));
  });
  return o;
}

double log_sd(const std::vector<double>& x) { return x.size() < 2 ? 0.0 : stdev(x); }

same_band choose_band(const process_medians& base, const compare_policy& p) {
  same_band b;
  b.floor = p.same_tolerance;
  b.ceiling = k_band_ceiling_factor * p.same_tolerance;
  b.aa_processes = static_cast<int>(base.log_median.size());
  b.aa_sd = log_sd(base.log_median);
  b.band = std::clamp(k_band_sd_factor * b.aa_sd, b.floor, b.ceiling);
  if (b.aa_processes < 2) {
    b.basis = strprintf("one baseline process: no measured A/A spread, the configured ±%.1f%%", b.floor * 100);
  } else if (b.band <= b.floor) {
    b.basis = strprintf("configured ±%.1f%%: %gx the measured A/A spread of the baseline (sd %.2f%% of its %d process "
                        "medians) is smaller",
                        b.floor * 100, k_band_sd_factor, b.aa_sd * 100, b.aa_processes);
  } else {
    b.basis = strprintf("%gx the measured A/A spread of the baseline (sd %.2f%% of its %d process medians: identical code "
                        "differs this much between processes)%s",
                        k_band_sd_factor, b.aa_sd * 100, b.aa_processes,
                        b.band >= b.ceiling ? strprintf(", capped at %.1f%%", b.ceiling * 100).c_str() : "");
  }
  return b;
}

power_statement power_for(double se, int df, double band, double confidence) {
  power_statement ps;
  ps.difference = k_power_difference;
  const double d = std::log1p(k_power_difference);
  ps.probability = std::min(interval_probabilities(-d, se, df, band, confidence).slower,
                            interval_probabilities(d, se, df, band, confidence).faster);
  ps.text = strprintf("a %.0f%% difference would have been detected with probability %.2f (interval se %.2f%%, %d df, band "
                      "±%.1f%%)",
                      k_power_difference * 100, ps.probability, se * 100, df, band * 100);
  return ps;
}

std::string decide_line(double log_speedup, double var_between, double var_within, int processes, int df, double band,
                        const compare_policy& p) {
  const double lo = std::log1p(-band), hi = std::log1p(band);
  // The distance the interval must clear: to the band's inside (same) or past its edge.
  const double gap = log_speedup <= lo || log_speedup >= hi
                         ? std::min(std::fabs(log_speedup - lo), std::fabs(log_speedup - hi))
                         : std::min(log_speedup - lo, hi - log_speedup);
  const double per = var_between + var_within;  // variance of one process's log median
  const double t = t_quantile(p.confidence, std::max(df, 8));
  const char* where = log_speedup <= lo || log_speedup >= hi ? "outside" : "inside";
  if (gap < 1e-4 || !(per > 0))
    return strprintf("the estimate (%.2f%%) sits on the edge of the ±%.1f%% band: no affordable number of processes decides "
                     "it; treat it as a difference of about the band's size",
                     (std::exp(log_speedup) - 1) * 100, band * 100);
  const double need = 2 * t * t * per / (gap * gap);
  std::string s = strprintf("the estimate (%.2f%%) is %.2f%% %s the ±%.1f%% band; ", (std::exp(log_speedup) - 1) * 100,
                            gap * 100, where, band * 100);
  if (need > k_max_planned_processes)
    s += strprintf("≈%.0f processes per implementation would decide it (now %d): more than a run affords, so treat it as "
                   "a difference too small to matter",
                   std::ceil(need), processes);
  else
    s += strprintf("≈%.0f processes per implementation (now %d) would decide it", std::ceil(need), processes);
  if (var_within > var_between)
    s += ", or a longer budget: within-process noise is most of the variance";
  return s;
}

process_plan plan_processes(double sd_process, int impls, int pilot, int max_processes, double band, double floor_band,
                            double confidence) {
  return plan_processes([v = sd_process * sd_process](int) { return v; }, impls, pilot, max_processes, band, floor_band,
                        confidence);
}

process_plan plan_processes(const std::function<double(int)>& var_at, int impls, int pilot, int max_processes, double band,
                            double floor_band, double confidence) {
  struct odds {
    double var = -1, aa_same = 0, power = 0;
  };
  const auto at = [&](int n) {
    odds o;
    o.var = var_at(n);
    if (o.var < 0) return o;
    const int df = impls * (n - 1);
    const double se = std::sqrt(std::max(o.var, 0.0) * 2.0 / n), d = std::log1p(k_power_difference);
    o.aa_same = interval_probabilities(0, se, df, band, confidence).same;
    o.power = interval_probabilities(-d, se, df, band, confidence).slower;
    return o;
  };
  // Power for a 3% difference is planned for only while the band is the configured floor: a band
  // widened by the process spread leaves too little room below 3% for an affordable plan (the
  // power statement then says what was reached).
  const bool can_call_3pct = band <= floor_band + 1e-12 && k_power_difference > band;
  const int lo = std::max(pilot, 2), hi = std::max(max_processes, lo);
  std::vector<odds> all;
  for (int n = lo; n <= hi; ++n) all.push_back(at(n));
  // The fewest meeting both targets; else (3% out of reach in what is affordable) the one with
  // the highest power among those meeting the A/A target; else the affordable n with the highest
  // P(A/A same).
  int chosen = -1, strongest = -1;
  for (int n = lo; n <= hi && chosen < 0; ++n) {
    const odds& o = all[static_cast<size_t>(n - lo)];
    if (o.var < 0 || o.aa_same < k_target_same) continue;
    if (!can_call_3pct || o.power >= k_target_power) chosen = n;
    else if (strongest < 0 || o.power > all[static_cast<size_t>(strongest - lo)].power + 1e-9) strongest = n;
  }
  const bool power_dropped = chosen < 0 && strongest > 0;
  if (power_dropped) chosen = strongest;
  int best = lo, smallest = lo;
  for (int n = lo; n <= hi; ++n) {
    const odds& o = all[static_cast<size_t>(n - lo)];
    const odds& b = all[static_cast<size_t>(best - lo)];
    const odds& m = all[static_cast<size_t>(smallest - lo)];
    if (o.var >= 0 && (b.var < 0 || o.aa_same > b.aa_same + 1e-9)) best = n;
    if (o.var >= 0 && (m.var < 0 || o.var / n < m.var / smallest)) smallest = n;
  }
  // P(A/A same) below one half everywhere (a pilot spread far beyond the band): the smallest
  // planned interval, not the n whose few df give the best lottery on a small estimated se. A
  // pilot's 2-df spread is often a fluke (host A/A, 2026-12-07: pilot sd 21.7%, final process
  // medians 5.7% apart, left at 2 processes and ambiguous), and more processes can show it.
  if (all[static_cast<size_t>(best - lo)].aa_same < 0.5) best = smallest;
  process_plan plan;
  plan.processes = std::max(chosen > 0 ? chosen : best, pilot);
  const odds o = at(plan.processes);
  plan.aa_same = o.aa_same;
  plan.power = o.power;
  plan.why = strprintf("process-median sd %.2f%%, band ±%.1f%%: %d process(es) per implementation give P(A/A same) %.2f "
                       "and P(3%% slower called) %.2f",
                       std::sqrt(std::max(o.var, 0.0)) * 100, band * 100, plan.processes, plan.aa_same, plan.power);
  if (chosen < 0 && plan.processes >= hi)
    plan.why += strprintf(" (capped at max_processes %d)", hi);
  else if (chosen < 0)
    plan.why += strprintf(" (the highest P(A/A same) of the numbers up to max_processes %d that the budget affords: more "
                          "processes would each get too few samples, or could not be started)",
                          hi);
  else if (power_dropped)
    plan.why += strprintf(" (P(3%% slower called) %.2f reached by no affordable number up to max_processes %d: the "
                          "most powerful that keeps P(A/A same))", k_target_power, hi);
  else if (!can_call_3pct)
    plan.why += " (3% power not planned for: the band is wider than the configured tolerance)";
  return plan;
}

}  // namespace magpie::kernel
