// The plan after a compare's pilot: launches per sample and processes per implementation
// (kernel/timing.h decide_sampling; docs/statistics.md).
#include <algorithm>
#include <cmath>

#include "core/stats.h"
#include "core/strings.h"
#include "kernel/timing.h"
#include "kernel/verdict.h"

namespace magpie::kernel {

namespace {

constexpr double k_short_kernel_ns = 10e3;   // kernels under this are batched (warm runs)
constexpr double k_batch_target_ns = 50e3;   // a batch lasts about this long
constexpr int k_max_batch = 256;
constexpr double k_sd_upper_quantile = 0.2;  // plan at the sd that the pilot exceeds with 80% odds

// Regularized lower incomplete gamma P(s, x) by its series (x < s + 40 here: converges fast).
double lower_gamma(double s, double x) {
  if (x <= 0) return 0;
  double term = 1 / s, sum = term;
  for (int n = 1; n < 2000 && term > sum * 1e-14; ++n) {
    term *= x / (s + n);
    sum += term;
  }
  return std::min(1.0, std::exp(s * std::log(x) - x - std::lgamma(s)) * sum);
}

// Quantile of chi-square(df) by bisection on its CDF.
double chi2_quantile(double p, int df) {
  double lo = 0, hi = df + 20 * std::sqrt(2.0 * df) + 40;
  for (int i = 0; i < 80; ++i) {
    double mid = (lo + hi) / 2;
    (lower_gamma(df / 2.0, mid / 2) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// Regularized incomplete beta I_x(a, b) by its continued fraction (modified Lentz).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - incomplete_beta(b, a, 1 - x);  // where the fraction converges
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x)) / a;
  double f = 1, c = 1, d = 0;
  for (int i = 0; i <= 400; ++i) {
    const double m = i / 2;
    const double num = i == 0       ? 1
                       : i % 2 == 0 ? m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
                                    : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
    d = 1 + num * d;
    d = 1 / (std::fabs(d) < 1e-30 ? 1e-30 : d);
    c = 1 + num / c;
    if (std::fabs(c) < 1e-30) c = 1e-30;
    f *= c * d;
    if (std::fabs(1 - c * d) < 1e-12) break;
  }
  return front * (f - 1);
}

// Quantile of F(d1, d2) by bisection on its CDF.
double f_quantile(double p, int d1, int d2) {
  const auto cdf = [&](double f) { return incomplete_beta(d1 / 2.0, d2 / 2.0, d1 * f / (d1 * f + d2)); };
  double lo = 0, hi = 1;
  while (cdf(hi) < p && hi < 1e12) hi *= 2;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (cdf(mid) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace

pilot_spread robust_pilot_spread(const std::vector<std::vector<double>>& log_medians, int baseline) {
  const size_t K = log_medians.size();
  std::vector<double> var(K, 0);
  std::vector<int> dfs(K, 0);
  std::vector<bool> kept(K, false);
  pilot_spread out;
  for (size_t k = 0; k < K; ++k) {
    if (log_medians[k].size() < 2) continue;
    var[k] = std::pow(log_sd(log_medians[k]), 2);
    dfs[k] = static_cast<int>(log_medians[k].size() - 1);
    kept[k] = true;
    out.all_var += var[k] * dfs[k];
    out.all_df += dfs[k];
  }
  out.all_var = out.all_df ? out.all_var / out.all_df : 0;
  const auto pooled_without = [&](size_t skip, double* v, int* df) {
    double acc = 0;
    *df = 0;
    for (size_t k = 0; k < K; ++k)
      if (kept[k] && k != skip) {
        acc += var[k] * dfs[k];
        *df += dfs[k];
      }
    *v = *df ? acc / *df : 0;
  };
  // Fewer than half of the implementations (with a spread) may be left out: the rest decide.
  const int with_spread = static_cast<int>(std::count(kept.begin(), kept.end(), true));
  for (int dropped = 0; 2 * (dropped + 1) < with_spread; ++dropped) {
    size_t worst = K;
    for (size_t k = 0; k < K; ++k)
      if (kept[k] && static_cast<int>(k) != baseline && (worst == K || var[k] > var[worst])) worst = k;
    if (worst == K) break;
    double rest = 0;
    int rest_df = 0;
    pooled_without(worst, &rest, &rest_df);
    if (rest_df < 1 || !(var[worst] > rest * f_quantile(1 - k_outlier_spread_p, dfs[worst], rest_df))) break;
    kept[worst] = false;
    out.left_out.push_back({static_cast<int>(worst), std::sqrt(var[worst])});
  }
  pooled_without(K, &out.var, &out.df);
  out.kept = kept;
  return out;
}

double median_difference_noise_ns(const timing_result& a, const timing_result& b) {
  double se2 = 0;
  for (const timing_result* r : {&a, &b}) {
    std::vector<double> v;
    for (const auto& pr : r->processes) v.push_back(pr.median_ns);
    if (v.size() < 2) return 0;
    se2 += std::pow(stdev(v), 2) / static_cast<double>(v.size());
  }
  return 3 * std::sqrt(se2);
}

sampling_record decide_sampling(const pilot_summary& pilot, const timing_policy& p, double same_tolerance, double confidence) {
  sampling_record s;
  const int K = static_cast<int>(pilot.log_medians.size());
  s.pilot = std::max(p.processes, 1);
  s.pilot_median_ns = pilot.median_ns;
  s.batch = p.batch;
  // Launches per sample.
  if (p.batch > 1) s.batch_why = "set in the timing policy";
  else if (p.cold) s.batch_why = "cold run: every launch follows a flush, so batch 1 (a batch would time launches 2..n with warm caches)";
  else if (!p.auto_batch) s.batch_why = "auto_batch is off";
  else if (!(pilot.median_ns > 0) || pilot.median_ns >= k_short_kernel_ns)
    s.batch_why = strprintf("pilot median %.2f us >= %.0f us: one launch per sample", pilot.median_ns / 1e3, k_short_kernel_ns / 1e3);
  else
    s.batch = std::clamp(static_cast<int>(std::ceil(k_batch_target_ns / pilot.median_ns)), 2, k_max_batch);
  // Between-process spread: pooled sd of log process medians over the implementations whose own
  // spread is not beyond the others' by more than chance (robust_pilot_spread: one erratic
  // implementation must not decide everyone's processes), and the upper bound planned with.
  const pilot_spread spread = robust_pilot_spread(pilot.log_medians, pilot.baseline);
  const int df = spread.df;
  s.pilot_sd = std::sqrt(spread.var);
  std::string left_out;
  for (const auto& [k, sd] : spread.left_out)
    left_out += strprintf("%s#%d (sd %.1f%%)", left_out.empty() ? "" : ", ", k, sd * 100);
  // The within part over the same implementations (an erratic one's medians are noisy too).
  double within_var = pilot.within_var;
  if (pilot.within_vars.size() == pilot.log_medians.size() && !spread.left_out.empty()) {
    std::vector<double> w;
    for (size_t k = 0; k < pilot.within_vars.size(); ++k)
      if (spread.kept[k]) w.push_back(pilot.within_vars[k]);
    if (!w.empty()) within_var = mean(w);
  }
  // The variance of one process's log median at the end, with n processes per implementation:
  // the between part (its 80% upper bound: the pilot has few df) plus the within part, which
  // shrinks with the samples that process gets by the end — and a budget shared by more
  // processes gives each fewer: the pilot's processes continue from `samples_per_process`, the new
  // ones get the rounds left after their start-up (start-up: the pilot's per wave of s.pilot).
  // Fewer than min_samples rounds left: n is not affordable (-1).
  // The within part is the medians' bootstrap variance, as the verdict's floor uses it
  // (docs/statistics.md: it overstates under a shared load, but the verdict keeps it).
  const double between = std::max(0.0, s.pilot_sd * s.pilot_sd - within_var);
  const double between_up = df > 0 ? between * df / chi2_quantile(k_sd_upper_quantile, df) : 0;
  const double m = pilot.samples_per_process > 0 ? pilot.samples_per_process : p.min_samples;
  const auto var_at = [&](int batch, bool startup_costs) {
    return [&, batch, startup_costs](int n) -> double {
      const bool restart = batch != p.batch;
      const int fresh = restart ? n : n - s.pilot;
      const double per_sample = pilot.round_s / std::max(K * s.pilot, 1) + (batch - 1) * pilot.median_ns * 1e-9;
      const double start = startup_costs && fresh > 0 ? pilot.startup_s * std::ceil(static_cast<double>(fresh) / s.pilot) : 0;
      const double rounds = (pilot.left_s - start) / std::max(per_sample * std::max(K, 1) * n, 1e-12);
      if (fresh > 0 && rounds < p.min_samples) return -1.0;
      const double r = std::max(rounds, 1.0), kept = restart ? 0 : n - fresh;
      const double within = within_var * m * (kept / (m + r) + fresh / r) / n;
      return between_up + within;
    };
  };
  const double band = std::clamp(k_band_sd_factor * s.pilot_sd, same_tolerance, k_band_ceiling_factor * same_tolerance);
  const int max_p = std::max(p.max_processes, s.pilot);
  const int impls = std::max(K, 2);
  const auto plan_for = [&](int batch, bool startup_costs) {
    return df > 0 ? plan_processes(var_at(batch, startup_costs), impls, s.pilot, max_p, band, same_tolerance, confidence)
                  : process_plan{s.pilot, 0, 0, "one process per implementation in the pilot: no spread measured"};
  };
  const double sd_up = std::sqrt(std::max(var_at(s.batch, false)(s.pilot), 0.0));
  process_plan plan = plan_for(s.batch, false);
  s.planned = plan.processes;
  s.why = strprintf("pilot: %d process(es) per implementation, sd of log process medians %.2f%% (%d df), of which within-process "
                    "%.2f%% at %.0f samples (bootstrap); planned with the between part's %.0f%% upper bound and the within part at the "
                    "samples each process gets by the end (%.2f%% at %d processes); ",
                    s.pilot, s.pilot_sd * 100, df, std::sqrt(within_var) * 100, m, (1 - k_sd_upper_quantile) * 100,
                    sd_up * 100, s.pilot) +
           (left_out.empty() ? ""
                             : strprintf("implementation(s) %s left out of the pooled spread: beyond the others' by more than "
                                         "chance (F test, p < %.3f; all pooled: sd %.2f%%); ",
                                         left_out.c_str(), k_outlier_spread_p, std::sqrt(spread.all_var) * 100)) +
           plan.why;
  // What the budget left affords: starting the new processes (with the batch, or without it when
  // a restart leaves no process min_samples rounds) and min_samples rounds over all.
  process_plan afforded = plan_for(s.batch, true);
  if (s.batch != p.batch && var_at(s.batch, true)(afforded.processes) < 0) {
    s.batch_why = strprintf("pilot median %.2f us, but the budget left (%.1f s) cannot restart the processes with batch %d: "
                            "batch %d",
                            pilot.median_ns / 1e3, pilot.left_s, s.batch, p.batch);
    s.batch = p.batch;
    afforded = plan_for(s.batch, true);
  } else if (s.batch != p.batch) {
    s.batch_why = strprintf("pilot median %.2f us < %.0f us: %d launches back to back per sample (~%.0f us), same inputs each "
                            "launch, so launches 2..n find them in cache (a warm measurement; the pilot's batch-1 processes "
                            "were stopped and their samples dropped)",
                            pilot.median_ns / 1e3, k_short_kernel_ns / 1e3, s.batch, s.batch * pilot.median_ns / 1e3);
  }
  const int n = std::min(afforded.processes, s.planned);
  if (n < s.planned)
    s.why += strprintf("; the budget left (%.1f s) affords %d (start-up %.2f s per wave of %d, %.2f ms per round, at least "
                       "min_samples %d rounds each): %s",
                       pilot.left_s, n, pilot.startup_s, s.pilot, pilot.round_s * 1e3, p.min_samples, afforded.why.c_str());
  s.used = n;
  return s;
}

}  // namespace magpie::kernel
