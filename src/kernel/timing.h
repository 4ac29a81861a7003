// Timing: nvbench's stopping policy applied by the supervisor to samples it requests from
// harness processes, several of them interleaved (A B C A B C ...) for comparisons.
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "core/stats.h"
#include "kernel/harness.h"

namespace magpie::kernel {

/// nvbench's stdrel criterion: finished once accumulated time ≥ min_time and either the
/// relative stdev < max_noise or the noise has converged (its own rel. stdev over the last 64
/// checks < 5%). Also finished at max_samples. The wall-clock budget is checked by the caller.
class stopping_criterion {
 public:
  explicit stopping_criterion(const timing_policy& p) : m_p(p) {}
  void add(double ns);
  /// Returns true and sets `reason` (noise_target_met, noise_converged, max_samples).
  bool finished(std::string* reason) const;
  size_t count() const { return m_n; }
  double noise() const { return m_noise.empty() ? 0 : m_noise.back(); }

 private:
  timing_policy m_p;
  size_t m_n = 0;
  double m_sum = 0, m_sum_sq = 0, m_total_s = 0;
  std::deque<double> m_noise;  ///< recent rel. stdev values (≤ 64 kept)
};

struct timing_result {
  bool ok = false;
  std::string error;
  std::string source;        ///< cupti | cuda_events | torch_events | host_clock
  std::string stop_reason;   ///< noise_target_met | noise_converged | max_samples | time_budget | error
  std::vector<double> samples_ns;  ///< per-launch times of record
  sample_summary stats;            ///< of samples_ns (ns)
  sample_summary harness_stats;    ///< the harness's own times (ns)
  double wall_s = 0;
  json ready;                ///< the harness's ready line
  json cupti_kernels;        ///< per kernel name summary (CUPTI)
  std::vector<std::string> warnings;
  json to_json(const timing_policy& p) const;
};

/// Starts one timing session per kernel (same seed and policy for all), warms each up, then
/// samples them round-robin until every criterion is finished or the budget is spent.
/// A session that fails is reported in its own result; the others continue.
std::vector<timing_result> measure_interleaved(const std::vector<const prepared_kernel*>& kernels,
                                               const timing_policy& p, uint64_t seed, const cupti_setup& cupti,
                                               const fs::path& work_dir);

}  // namespace magpie::kernel
