// Run-to-run noise tests for `magpie results compare`.
//   Replicates on both sides (n ≥ 2 each): Welch's two-sample t-test on the run-level values.
//   Replicates on one side only: the single run is tested against the other side's
//     prediction interval (t with n−1 df, equal-variance assumption).
//   Per-request samples only (one run a side): a bootstrap CI of the statistic's ratio —
//     within-run evidence only, reported as such and never as "beyond run-to-run noise".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace magpie::store {

/// Student t CDF P(T ≤ t) with `df` degrees of freedom (df > 0, may be fractional).
double student_t_cdf(double t, double df);
/// Two-sided critical value t* with P(|T| > t*) = alpha.
double student_t_critical(double alpha, double df);

struct noise_test {
  std::string method;      ///< "welch_t" | "prediction_interval" | "bootstrap_within_run" | "none"
  bool tested = false;     ///< false: not enough data (method "none")
  double p_value = 1.0;    ///< two-sided (welch / prediction); bootstrap: NaN
  double ratio = 0;        ///< center(b) / center(a)
  double ratio_low = 0, ratio_high = 0;  ///< CI of the ratio at 1 − alpha
  double df = 0;
  bool significant = false;  ///< the CI excludes 1 / p < alpha
};

/// Run-level values of two groups (each value one run). Center = mean.
noise_test compare_replicates(const std::vector<double>& a, const std::vector<double>& b, double alpha);

/// Per-request samples of one run per side; `statistic` is "mean", "median" or "pNN".
noise_test compare_samples(const std::vector<double>& a, const std::vector<double>& b, const std::string& statistic,
                           double alpha, int resamples, uint64_t seed);

/// The statistic named by a metric key suffix ("median_ms" → "median", "p99_ms" → "p99",
/// "mean_ms" → "mean"); "" when it is not a sample statistic (std, min, max).
std::string statistic_of_metric(const std::string& metric_name);

/// Evaluates "mean" | "median" | "pNN" over `v`.
double evaluate_statistic(const std::vector<double>& v, const std::string& statistic);

}  // namespace magpie::store
