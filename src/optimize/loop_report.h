// loop_report.json as data: the loop fills this struct step by step and writes it through its one
// codec (optimize/loop_report_codec.h) after every step; resume decodes the earlier report with
// the same codec; optimize/report_printer.h prints the summary table and loop_report.md from it.
// Every top-level block is optional: it is there once the step that fills it ran (docs in
// loop.h). Values that are other programs' documents, copied verbatim, stay opaque (`json`
// members): the server's info answer (server_info), the config snapshot, the benchmark client
// block, stop details and the values the analysis summary copies from magpie trace's outputs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "optimize/commands.h"
#include "optimize/decide.h"
#include "optimize/measure.h"

namespace magpie::optimize {

/// The loop's outcome (loop.h): improved | stopped | failed | paused.
enum class loop_result { improved, stopped, failed, paused };
const char* loop_result_name(loop_result r);
std::optional<loop_result> parse_loop_result(std::string_view word);

/// A step's state in `steps.<name>.status`.
enum class step_status { running, ok, stopped, failed };
const char* step_status_name(step_status s);
std::optional<step_status> parse_step_status(std::string_view word);

/// One step's record (the report's `steps`, in the order the loop ran them).
struct step_record {
  std::string name;
  step_status status = step_status::running;
  std::optional<double> seconds;          ///< set when the step ended
  std::optional<stop_reason> stop;        ///< status stopped
  std::optional<std::string> error;       ///< status failed
  bool resumed = false;                   ///< kept from an earlier report
};

/// `progress`: the step running now (absent once the loop ended).
struct loop_progress {
  std::string step;
  int64_t index = 0, total = 0;
};

/// The workload block (`benchmark`): the client settings of serve's benchmark config, then the loop's own.
struct loop_benchmark {
  json client = json::object();           ///< serve::benchmark_config_json(...)["client"] (opaque)
  int64_t concurrency = 0, warmup_prompts = -1, profile_prompts = 0;
  double target_s = 0;
};

/// One started server (`servers[]`).
struct server_record {
  std::string tag, variant, url;
  std::vector<std::string> argv;
  std::string log;
  double ready_s = 0;
  server_info info;
  std::optional<std::string> exit;        ///< how the process ended (nullopt: running)
};

/// One warm-up pass (discarded), by server tag (`warmups.<tag>`).
struct warmup_record {
  std::string tag, workspace;
  int64_t num_prompts = 0;
  std::optional<double> duration_s, output_throughput;
};

struct calibration_record {
  int64_t num_prompts = 0;
  std::optional<std::string> probe_workspace;  ///< nullopt: the count came from the config
  std::string how;
};

/// One measured benchmark run (initial_runs, baseline_runs, after_runs).
struct run_record {
  std::string workspace, url, server;
  run_metrics metrics;
  fingerprint fp;
};

/// The profiled run (`profile`); a hand-written report to resume from may hold only the trace.
struct profile_record {
  std::optional<std::string> workspace;
  std::string trace;
  std::optional<run_metrics> metrics;
  std::optional<bool> profiling_enabled;
};

// ---------------------------------------------------------------- analysis summary
/// A top kernel of `magpie trace report` (values copied from its JSON, any type).
struct summary_kernel {
  std::string name;
  json calls, total_us, category, bound, pct_roofline;
};
struct summary_op {
  std::string name;
  json category, kernel_time_us_sum, bound, pct_roofline_mean;
};
/// One stage of `magpie trace stages` with the first rows of its roofline CSV (cells as text).
struct summary_stage {
  std::string stage;
  json step, why, error;
  std::string roofline_csv;
  std::vector<std::vector<std::pair<std::string, std::string>>> top;
};
/// The compact view of the trace analysis outputs (`analysis.summary`).
struct analysis_summary {
  std::string gap_csv;
  json gpu_spec, gpu_timeline;
  std::vector<summary_kernel> top_kernels;
  std::vector<summary_op> top_ops;
  std::optional<json> report_error;
  std::vector<summary_stage> stages;
  json stages_errors = json::array();
  json sources_summary;
  std::optional<std::string> trace;
};

struct analysis_record {
  std::string trace;
  double window_lo = 0, window_hi = 100;  ///< percent of the trace span (0-100 when widened)
  bool window_widened = false;
  std::string gap_csv, sources_json;
  analysis_summary summary;
};

// ---------------------------------------------------------------- kernel choice and switch
struct skipped_kernel {
  int rank = 0;
  std::string name, why;
};
/// The kernel the loop chose (`chosen`).
struct chosen_kernel {
  std::string kernel;
  int rank = 0;
  std::string op, source_file, file, path;
  int64_t line = 0;
  std::optional<double> confidence;
  double total_us = 0, pct_total = 0;
  int64_t calls = 0;
  double op_share_pct = 0, op_share_of_ranked_pct = 0;
  std::vector<skipped_kernel> skipped_above;
};

/// `switch`: the candidate variant and the servers' answers (kernel_spec is derived from them).
struct switch_record {
  std::string variant, control, servers;
  server_info server;
  std::optional<server_info> baseline_server;  ///< concurrent servers only
};

// ---------------------------------------------------------------- series and decision
struct power_step {
  int64_t pairs = 0;
  double mde_pct = 0;
};
/// The series' power bookkeeping: the smallest detectable change after each pair, and why the
/// time budget ended the series (when it did).
struct series_power {
  std::vector<power_step> history;
  std::optional<std::string> budget_stop;
};

/// The end-to-end series' design (`design`).
struct loop_design {
  std::string order, servers;
  std::vector<std::string> sequence;      ///< the order of runs, e.g. A B B A
  int64_t pairs = 0, server_starts = 0;
  series_power power;
  double seconds = 0, max_series_s = 0;
};

/// `inputs`: the fingerprint every run shared.
struct inputs_record {
  std::optional<std::string> fingerprint;
  int64_t runs_checked = 0;
};

/// The power statement (`power`): smallest detectable change per decision metric.
struct power_statement {
  double alpha = 0, power = 0;
  int64_t n_per_side = 0;
  double target_mde_pct = 0;
  std::vector<std::pair<std::string, double>> mde_pct;
  bool reached = false;
};

/// What the kernel's gain predicts end to end, and what was measured (`prediction`).
struct loop_prediction {
  kernel_prediction predicted;
  double measured_change_pct = 0, measured_tpot_change_pct = 0;
};

/// The end-to-end decision's data (`e2e`).
struct e2e_record {
  std::map<std::string, metric_change> metrics;
  std::string primary_metric;
  std::vector<std::string> decision_metrics;
  double alpha = 0;
  std::optional<std::string> results_compare_error;
  /// magpie results compare's verdict per decision metric (absent when it failed).
  std::optional<std::vector<std::pair<std::string, external_verdict>>> results_compare;
  std::optional<std::string> store_hash_warning;
};

struct resumed_record {
  std::string from, from_step;
  std::vector<std::string> kept;          ///< steps kept from the earlier report
  std::optional<int64_t> num_prompts_was;
};

/// loop_report.json. Keys are written in the order the loop fills them (the codec's order).
struct loop_report {
  std::optional<std::string> schema, started_at, name, magpie, workspace;
  std::optional<json> config;             ///< optimize_config_json(cfg) snapshot (opaque)
  std::optional<std::string> control;
  std::optional<int64_t> runs_per_side;
  std::optional<loop_benchmark> benchmark;
  std::vector<step_record> steps;
  std::optional<stop_reason> stop;
  std::optional<loop_result> outcome;     ///< nullopt: still running
  std::optional<resumed_record> resumed;
  std::optional<loop_progress> progress;
  std::vector<command_record> commands;
  std::optional<server_info> server_baseline;
  std::optional<std::vector<server_record>> servers;
  std::optional<std::vector<warmup_record>> warmups;
  std::optional<int64_t> num_prompts;
  std::optional<calibration_record> calibration;
  std::optional<std::vector<run_record>> initial_runs;
  std::optional<profile_record> profile;
  std::optional<analysis_record> analysis;
  std::optional<std::vector<ranked_kernel>> ranking;
  std::optional<chosen_kernel> chosen;
  std::optional<std::string> compare_report;
  std::optional<gate_result> kernel;      ///< the compare gate; `win` when it had a winner
  std::optional<switch_record> switched;  ///< `switch`
  std::optional<std::vector<run_record>> baseline_runs, after_runs;
  std::optional<loop_design> design;
  std::optional<inputs_record> inputs;
  std::optional<power_statement> power;
  std::optional<loop_prediction> prediction;
  std::optional<e2e_record> e2e;
  std::optional<std::string> control_result;  ///< the A/A control's result, when there was one
  std::optional<std::string> error, error_code;  ///< why a step failed
  std::optional<std::string> paused_after, interrupted, finished_at;

  /// The record of step `name` (nullptr when it has none).
  step_record* step(const std::string& name);
  const step_record* step(const std::string& name) const;
};

/// A run's record for the report.
run_record run_record_of(const bench_result& r);
/// The record of a started (or stopped) server.
server_record server_record_of(const variant_server& s);

}  // namespace magpie::optimize
