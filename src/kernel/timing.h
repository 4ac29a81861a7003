// Timing: nvbench's stopping policy applied by the supervisor to samples it requests from
// harness processes — several processes per implementation, interleaved in a seeded shuffled
// order each round — with checked samples (fresh secret inputs, re-poisoned outputs, read by the supervisor and compared
// against the reference) and the integrity checks of docs/harness-protocol.md.
#pragma once

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/stats.h"
#include "kernel/correctness.h"
#include "kernel/harness.h"
#include "kernel/integrity.h"

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

/// A checked sample: its outputs, read by the supervisor from the exchange memory while the
/// harness's processes were stopped, compared completely with the reference's for the same seed.
struct check_outcome {
  uint64_t sample_id = 0;
  int process = 0;
  bool passed = true;
  bool compared = false;  ///< against the reference's outputs (else: only "was it written")
  size_t elements = 0;    ///< elements compared over all outputs
  std::string failure;
};

/// One harness process of an implementation.
struct process_result {
  int index = 0;
  std::vector<double> samples_ns;  ///< time of record per launch
  std::vector<int> rounds;         ///< the sampling round of each (parallel to samples_ns)
  double median_ns = 0;
  double rtt_median_ns = 0;        ///< supervisor's ping round trip
  double bracket_excess_ns = 0;    ///< median(sample bracket − rtt) per launch
  double observed_ns = 0;          ///< median per launch of min(CPU time, bracket − rtt): what the supervisor saw
  double unclaimed_ns = 0;         ///< 10th percentile per launch of bracket − time of record: overhead the claim leaves out
  /// Host clock: median per launch of the sample's CPU floor (sample_record::cpu_floor_ns) − its
  /// time of record: the harness's own per-sample work outside its timer, and what a claim hides
  /// (NaN: not read, a GPU timer).
  double cpu_floor_excess_ns = std::nan("");
  std::vector<double> cpu_floor_excess;  ///< that figure per sample of record (not in the report)
  double harness_median_ns = 0;
  size_t harness_over_bracket = 0; ///< samples whose harness time exceeds the supervisor's bracket
  channel_findings findings;
  supervisor_cost cost;
};

/// How a timing run chose launches per sample and processes per implementation (its report's
/// `sampling`): a pilot with timing.processes processes, then — in a compare — the processes
/// that the pilot's between-process spread asks for, as far as the budget allows.
struct sampling_record {
  int batch = 1;              ///< launches per sample of the processes whose samples count
  std::string batch_why;
  int pilot = 0;              ///< processes per implementation in the pilot
  int planned = 0;            ///< processes per implementation the plan asked for
  int used = 0;               ///< processes per implementation whose samples count
  double pilot_sd = 0;        ///< sd of log process medians in the pilot, pooled over implementations
  double pilot_median_ns = 0; ///< median per launch in the pilot
  std::string why;
};

/// A fresh sample and its partner: the repeated sample issued on the same process right before
/// the fresh one's `inputs` (per launch, ns).
struct fresh_pair {
  double fresh_ns = 0, partner_ns = 0;              ///< times of record
  double fresh_cpu_ns = 0, partner_cpu_ns = 0;      ///< the tree's CPU time during each `sample` (NaN: not read)
  double fresh_bracket_ns = 0, partner_bracket_ns = 0;  ///< the supervisor's clock around each
  double extra_ns = 0;                              ///< the fresh sample's inputs_extra_ns
};

struct timing_result {
  bool ok = false;
  std::string error;
  timing_source source = timing_source::none;
  std::string stop_reason;   ///< noise_target_met | noise_converged | max_samples | time_budget | error
  std::vector<double> samples_ns;  ///< per-launch times of record, all processes
  sample_summary stats;            ///< of samples_ns (ns)
  sample_summary harness_stats;    ///< the harness's own times (ns)
  std::vector<double> harness_samples_ns;  ///< those times, all processes (merging parallel groups)
  double wall_s = 0;
  std::optional<ready_line> ready;  ///< the first process's ready line
  std::vector<cupti_kernel_row> cupti_kernels;  ///< per kernel name summary (CUPTI)
  std::vector<std::string> warnings;
  std::vector<process_result> processes;
  std::vector<check_outcome> checks;
  std::vector<double> fresh_ns, reused_ns;  ///< time of record of samples after / without fresh inputs
  std::vector<double> fresh_extra_ns;       ///< per fresh_ns: the tree's CPU during its `inputs` beyond the busiest thread
  std::vector<fresh_pair> pairs;            ///< fresh samples with their partners (all processes)
  std::vector<double> inputs_bracket_ns;    ///< supervisor's clock around each `inputs`
  std::vector<double> inputs_cpu_ns;        ///< the harness tree's CPU time during each `inputs`
  std::vector<double> gap_cpu_samples_ns;   ///< per sample: the tree's CPU time outside every command since the previous reply
  double kernels_per_checked_gap = 0;  ///< GPU kernels launched between samples, before a fresh one
  double gpu_ns_per_fresh_gap = 0;     ///< GPU time of the work launched there (CUPTI), mean per fresh sample
  size_t stray_ops = 0;                ///< launched outside windows by threads other than the harness's
  double stray_gpu_ns = 0;
  size_t unmatched_ops = 0;            ///< GPU work whose launch was not recorded
  size_t gpu_ops_under_host_timer = 0; ///< GPU work of a harness that times on the CPU
  size_t cupti_bad_macs = 0, cupti_sequence_errors = 0, cupti_records = 0;
  bool cupti_hello = true;
  integrity_report integrity;          ///< the timing stage's checks (see check_timing_integrity)
  sampling_record sampling;
};

struct measure_request {
  std::vector<const prepared_kernel*> kernels;
  timing_policy policy;
  uint64_t seed = 0;                  ///< warm-up inputs (not secret)
  uint64_t init_seed = 0;             ///< weights built at construction: the correctness runs' (model_init_seed)
  uint64_t order_seed = 0;            ///< round order, checked rounds, probe indices (secret)
  std::vector<uint64_t> check_seeds;  ///< inputs of checked samples (secret)
  const held_reference* reference = nullptr;
  correctness_policy tolerances;
  cupti_setup cupti;
  int first_process = 0;          ///< index of the first process (processes of other groups come before)
  uint64_t first_sample_id = 1;   ///< sample ids count up from here (unique over parallel groups)
  bool progress = true;           ///< draw the progress bar (off when groups run in parallel)
  bool plan = false;              ///< a compare on one group: plan processes and batch after a pilot
  int baseline = -1;              ///< index of the compare's baseline in `kernels` (-1: none)
  double same_tolerance = 0.02;   ///< compare_policy's, for the plan's band
  double confidence = 0.95;
};

/// The order of one group's rounds (a timing run's, or one GPU's in timing_order::devices).
struct round_order {
  std::string policy;
  int processes_per_kernel = 0;
  uint64_t seed = 0;
  std::vector<int> checked_rounds;
  std::vector<std::vector<std::string>> first_rounds;  ///< "kernel#process" in the order of each of the first rounds
};

/// What one GPU's group measured (compare workers): its processes, its rounds' order, per kernel
/// the median of its samples and the speedup against the baseline's processes on the same GPU.
struct device_order {
  struct kernel_row {
    std::string kernel_id;
    bool ok = false;
    size_t samples = 0;
    std::optional<double> median_ns, speedup_vs_baseline;
    std::string stop_reason;
  };
  std::string device;
  std::vector<int> processes;
  round_order order;
  std::vector<kernel_row> kernels;
};

/// How the timing rounds were ordered (a report's timing_order).
struct timing_order : round_order {
  bool by_device = false;  ///< measure_on_devices: `devices` follow the seed, the rounds only with one group
  bool rounds = true;      ///< checked_rounds / first_rounds are the run's (false: several groups, see devices)
  std::vector<device_order> devices;
};

struct measure_outcome {
  std::vector<timing_result> results;  ///< one per kernel, in order
  timing_order order;
};

/// Starts `policy.processes` timing sessions per kernel (same seeds and policy for all), warms
/// them up, then samples them in a shuffled order each round until every criterion is finished
/// or the budget is spent, with checked samples at the first round, at random rounds and at a
/// closing round. A kernel whose process fails is reported in its own result. With `plan`, the
/// first part of the budget is a pilot; decide_sampling then sets the batch and the processes
/// (the processes of a pilot with another batch are stopped and their samples dropped; their
/// checks stay).
measure_outcome measure_interleaved(const measure_request& req);

/// What the pilot measured, for decide_sampling.
struct pilot_summary {
  std::vector<std::vector<double>> log_medians;  ///< per implementation, per process
  double within_var = 0;  ///< mean bootstrap variance of a pilot process's log median
  /// The same per implementation (mean over its processes; empty: within_var stands for all).
  std::vector<double> within_vars;
  int baseline = -1;      ///< index of the compare's baseline in log_medians (-1: none)
  double samples_per_process = 0;  ///< mean samples of record of a pilot process (within_var is at this many)
  double median_ns = 0;   ///< median per launch over every pilot sample
  double startup_s = 0;   ///< wall time to start and warm up the pilot's processes
  double round_s = 0;     ///< wall time of one round over the pilot's processes
  double left_s = 0;      ///< sampling budget left
};

/// The pilot's between-process spread as the plan uses it (issue 36): the variance of log process
/// medians pooled over the implementations, leaving out — the most extreme first, fewer than half
/// of them, never the baseline — an implementation whose own variance exceeds the pooled rest's
/// by more than chance (F test at p < k_outlier_spread_p). In the GPU adversarial suite attacks
/// with erratic times made the pooled sd 62.8% and the plan useless for the honest ones; a
/// genuinely noisy baseline is always pooled, so it still gets more processes.
struct pilot_spread {
  double var = 0;  ///< pooled over the kept implementations
  int df = 0;
  double all_var = 0;  ///< pooled over all (what the plan used before)
  int all_df = 0;
  std::vector<bool> kept;                       ///< per implementation
  std::vector<std::pair<int, double>> left_out;  ///< (implementation, its sd)
};
inline constexpr double k_outlier_spread_p = 0.001;
pilot_spread robust_pilot_spread(const std::vector<std::vector<double>>& log_medians, int baseline);

/// The plan after the pilot: batch (raised only from 1, for warm runs, under 10 µs) and
/// processes per implementation (plan_processes at an upper bound of the pilot's between-process
/// variance plus the within-process part expected at the end), cut to what the budget left can
/// start and sample `min_samples` times.
sampling_record decide_sampling(const pilot_summary& pilot, const timing_policy& p, double same_tolerance, double confidence);
inline constexpr double k_pilot_share = 0.3;  ///< of the budget, before a compare plans its processes

/// How far apart the process medians of two implementations can be by chance: 3 × the standard
/// error of the difference of their mean process medians, from each side's spread (0 with fewer
/// than two processes a side). clock_gain holds a candidate to the gain it claims only beyond
/// this: on a loaded machine an identical copy's chance 0.8% gain met a chance 1 ms difference of
/// overheads and was rejected (docs/statistics.md).
double median_difference_noise_ns(const timing_result& a, const timing_result& b);

/// A checked sample's outputs (`got`, laid out as `layout`) compared completely with the
/// reference's for `seed`; without reference outputs, at least written (not the poison).
check_outcome judge_outputs(const held_reference* ref, uint64_t seed, const std::vector<exchange_output>& layout,
                            const std::vector<tensor>& got, const correctness_policy& p);

/// The timing stage's integrity checks of every result (`baseline`: index of the result the
/// others are compared with for input-generation work, -1 none); sets result.integrity.
void check_timing_integrity(std::vector<timing_result>& results, int baseline, const timing_policy& p);

}  // namespace magpie::kernel
