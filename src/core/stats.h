// Descriptive statistics and bootstrap confidence intervals for timing samples.
#pragma once

#include <cstdint>
#include <vector>

#include <string>

namespace magpie {

/// Linear-interpolation percentile, rank = p·(n−1)/100 (numpy's default). p in [0,100].
double percentile(std::vector<double> v, double p);
double percentile_sorted(const std::vector<double>& sorted, double p);
double median(std::vector<double> v);
double mean(const std::vector<double>& v);
/// Sample standard deviation (n−1); 0 when n < 2.
double stdev(const std::vector<double>& v);

struct sample_summary {
  size_t n = 0;
  double median = 0, mean = 0, stdev = 0, min = 0, max = 0;
  double p25 = 0, p75 = 0, iqr = 0;
  double p5 = 0, p95 = 0;
  double rel_stdev = 0;  ///< stdev / mean (nvbench's noise)
};
sample_summary summarize(const std::vector<double>& v);

/// A fresh seed: 64 bits from /dev/urandom, or, where it cannot be read, the monotonic clock
/// in ns xor the pid.
uint64_t fresh_seed();

/// Deterministic 64-bit generator (splitmix64) for bootstrap resampling.
class splitmix64 {
 public:
  explicit splitmix64(uint64_t seed) : m_state(seed) {}
  uint64_t next();
  /// Uniform integer in [0, n).
  uint64_t below(uint64_t n);

 private:
  uint64_t m_state;
};

struct interval {
  double low = 0, high = 0;
};

/// Percentile bootstrap CI of median(baseline)/median(candidate) (a speedup: > 1 means the
/// candidate is faster) from independent resamples of each set.
interval bootstrap_ratio_of_medians(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                    double confidence, int resamples, uint64_t seed);

}  // namespace magpie
