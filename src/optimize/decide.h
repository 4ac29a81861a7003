// The loop's decisions, from step outputs only (no I/O), so every stop reason can be driven
// from recorded or synthetic data (tests/unit/optimize). Stop codes are stable:
//   source_mapping_ambiguous       a kernel ranked at or above the choice has several definitions
//   source_mapping_low_confidence  the chosen kernel resolved below min_confidence
//   source_mapping_disagrees       the mapper and the op registry (ops.*.kernels) disagree
//   no_mappable_kernel             no ranked kernel is defined in the searched source trees
//   no_candidates                  the chosen op has no candidates
//   correctness_unproven           outputs not compared against a reference, or the baseline failed it
//   no_correct_candidate           every candidate failed the correctness gate
//   no_faster_candidate            correct candidates exist, none faster beyond its CI
//   inputs_changed                 the two sides' inputs (workload, requests, model) differ
//   e2e_within_noise               the end-to-end change is not beyond run-to-run noise
//   e2e_regression                 a decision metric changed beyond noise for the worse
// Infrastructure failures (server_failed, benchmark_failed, profile_failed, switch_failed,
// step_failed) are errors, not stops.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/compare_report_codec.h"
#include "core/json.h"
#include "core/states.h"
#include "optimize/config.h"

namespace magpie::optimize {

struct stop_reason {
  std::string code, message;
  json details = json::object();
};

/// The guide's wording for a stop code ("source mapping uncertain", …); "infrastructure" else.
std::string stop_category(const std::string& code);

// ---------------------------------------------------------------- kernel choice
/// Where a ranked kernel stands for the choice: defined in our sources and an op's kernel
/// (ours), not ours (external), several definitions (ambiguous), resolved below min_confidence
/// (low_confidence), or the mapper and the op registry disagree (disagrees).
enum class disposition { ours, external, ambiguous, low_confidence, disagrees };
/// The loop report's words, as the enumerators are named (decide.cpp).
const char* disposition_name(disposition d);
std::optional<disposition> parse_disposition(std::string_view word);
inline void to_json(json& j, disposition d) { j = disposition_name(d); }

struct ranked_kernel {
  int rank = 0;
  std::string name, kind, category, source_resolution, source_error, source_file, file, input_shapes;
  int64_t calls = 0, line = 0;
  double total_us = 0, avg_us = 0, pct_total = 0;
  std::optional<double> confidence;
  std::vector<std::string> candidates;   ///< definitions found (ambiguous mappings)
  std::string symbol, op;                ///< registry symbol and op ("" when none)
  optimize::disposition disposition = optimize::disposition::external;  ///< set by classify
  std::string why;
};

/// Rows of a gap_analysis.csv (upstream Magpie's columns; '#' preamble skipped), ranked as given.
status_or<std::vector<ranked_kernel>> read_gap_csv(const std::string& text);
/// "$LOOP_DIR/kernels_baseline.py:17" → ("kernels_baseline.py", 17); ("", 0) otherwise.
std::pair<std::string, int64_t> parse_source_file(const std::string& s);
/// kernel name → (confidence, candidates); decoded from `magpie trace sources --json` by
/// source_confidences (optimize/decide_codec.h).
using source_confidence_map = std::map<std::string, std::pair<std::optional<double>, std::vector<std::string>>>;
/// Sets symbol, op, disposition and why on every row.
void classify(std::vector<ranked_kernel>& rows,
              const std::map<std::string, std::pair<std::optional<double>, std::vector<std::string>>>& conf,
              const optimize_config& cfg);
/// The highest-ranked kernel that is ours with every kernel above it external; a stop otherwise.
/// Returns the index into rows.
std::variant<size_t, stop_reason> choose_kernel(const std::vector<ranked_kernel>& rows);

// ---------------------------------------------------------------- compare gate
struct candidate_result {
  std::string id;
  kernel_outcome outcome = kernel_outcome::failed;
  correctness_basis basis = correctness_basis::none;  ///< the report's correctness_method
  std::optional<verdict_kind> verdict;                ///< nullopt: the report had no verdict for it
  std::optional<double> speedup, ci_low, ci_high, median_ns;
  std::optional<double> confidence;                   ///< of the interval (0.95: a 95% CI)
  std::string reason;                                 ///< the verdict's reason (why not ranked, or its interval)
  int64_t samples = 0;
  std::vector<std::string> errors;
};

/// One candidate's verdict for a stop message: "ambiguous 1.100x (95% CI 0.950-1.300)", or
/// "not ranked: <the compare's reason>" (rejected by an integrity check, not timed, ...).
std::string describe_verdict(const candidate_result& c);

struct winner {
  std::string id, impl;
  double speedup = 0, ci_low = 0, ci_high = 0;
  std::optional<double> baseline_median_ns, winner_median_ns;
};

struct gate_result {
  std::string baseline_id, reference;
  std::vector<candidate_result> kernels;
  std::optional<winner> win;
  std::optional<stop_reason> stop;
};

/// From compare_report.json (decoded by core's decode_compare_report): the fastest candidate
/// that passed the correctness gate on outputs with a `faster` verdict whose CI lies above 1.
gate_result choose_winner(const compare_report_record& compare_report, const op_config& op);

// ---------------------------------------------------------------- benchmarks and inputs
/// The end-to-end metrics of one run (absent: not set).
using run_metrics = std::map<std::string, double>;
/// Higher is better for throughputs, lower for latencies; false for unknown names.
bool higher_is_better(const std::string& metric);
extern const std::vector<std::string> k_e2e_metrics;

/// sha256 hex of each part (workload, requests, model) and of all of them together.
struct fingerprint {
  std::string total;
  std::map<std::string, std::string> parts;
};
// make_fingerprint (of the workload, request and model documents): optimize/decide_codec.h.
/// Every run of both sides must equal `before[0]`; else inputs_changed naming the parts.
std::optional<stop_reason> check_inputs(const std::vector<fingerprint>& before, const std::vector<fingerprint>& after);

// ---------------------------------------------------------------- end-to-end statistics
struct metric_change {
  bool tested = false;
  size_t n_before = 0, n_after = 0;
  double before_mean = 0, before_std = 0, before_min = 0, before_max = 0, before_spread_pct = 0;
  double after_mean = 0, after_std = 0, after_min = 0, after_max = 0;
  double change_pct = 0, welch_t = 0, welch_df = 0, p_value = 1;
  bool beyond_noise = false;
  std::optional<bool> better;
  double mde_pct = 0;  ///< smallest change (percent of the baseline mean) detectable at alpha/power
};

/// Welch's t-test of mean(b) vs mean(a): (t, df, two-sided p). Constant equal samples: p = 1.
struct welch_result {
  double t = 0, df = 0, p = 1;
};
welch_result welch(const std::vector<double>& a, const std::vector<double>& b);

/// Smallest detectable change in percent of mean(a), two-sided alpha, with `power`, for n runs
/// per side and the pooled run-to-run standard deviation of both sides.
double minimum_detectable_change_pct(const std::vector<double>& a, const std::vector<double>& b, double alpha, double power);

std::map<std::string, metric_change> e2e_change(const std::vector<run_metrics>& before, const std::vector<run_metrics>& after,
                                                double alpha, double power);

/// magpie results compare's view of one metric.
struct external_verdict {
  std::string name, verdict, basis;
  std::optional<bool> beyond_noise;
  double change_pct = 0;
};

/// "improved" when every decision metric improved beyond noise by both tests; a stop otherwise.
/// `theirs` maps metric → magpie results compare's verdict (absent: not known).
std::variant<std::string, stop_reason> e2e_decision(const std::map<std::string, metric_change>& change,
                                                    const std::vector<std::string>& metrics,
                                                    const std::map<std::string, external_verdict>& theirs);

/// What the kernel gain predicts end to end: the chosen op's share of GPU time in the window
/// times the time the kernel saves, (1 − 1/speedup); as a GPU-time change and, if the step
/// were GPU-bound, as a throughput change (percent; each with the interval from the speedup's CI).
struct kernel_prediction {
  double op_share_pct = 0, speedup = 0;
  std::pair<double, double> speedup_ci, gpu_time_change_pct_ci, throughput_change_pct_ci;
  double gpu_time_change_pct = 0, throughput_change_pct = 0;
};
kernel_prediction predict_kernel_gain(double op_share_pct, double speedup, double ci_low, double ci_high);

}  // namespace magpie::optimize
