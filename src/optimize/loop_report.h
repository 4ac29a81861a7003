// loop_report.json as data: what `magpie optimize` prints at the end and writes to
// loop_report.md, decoded once from the loop's document (optimize/loop_report_codec.h) and
// printed by optimize/report_printer.cpp. The loop keeps writing loop_report.json itself after
// every step (the document resume reads back); this is the view of its finished form.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "optimize/decide.h"

namespace magpie::optimize {

/// The loop's outcome (loop.h): improved | stopped | failed | paused.
enum class loop_result { improved, stopped, failed, paused };
const char* loop_result_name(loop_result r);
std::optional<loop_result> parse_loop_result(std::string_view word);

/// One benchmark run of the report (initial_runs, baseline_runs, after_runs).
struct loop_run_row {
  std::string server, workspace;
  std::optional<double> output_throughput, tpot_mean_ms;  ///< metrics; nullopt: not measured
};

/// One warm-up pass (discarded), by server tag.
struct loop_warmup {
  std::string tag;
  std::optional<double> num_prompts, duration_s;
};

/// The end-to-end series' design (the report's `design`).
struct loop_design {
  std::string order, servers;
  std::optional<double> pairs, server_starts;
  std::vector<std::string> sequence;      ///< the order of runs, e.g. A B B A
  std::optional<std::string> budget_stop; ///< why the time budget ended the series
};

/// The kernel the loop chose (the report's `chosen`).
struct loop_chosen {
  std::string kernel, op, file;
  std::optional<double> rank, pct_total, line, confidence;
};

/// What the kernel's gain predicts end to end (the report's `prediction`).
struct loop_prediction {
  std::optional<double> op_share_of_gpu_time_pct;
  double kernel_speedup = 0, gpu_time_change_pct = 0, throughput_change_pct_if_gpu_bound = 0, measured_change_pct = 0;
};

/// One step's record (the report's `steps`, in the order the loop ran them).
struct loop_step_row {
  std::string name, status;               ///< status: running | ok | stopped | failed
  bool resumed = false;                   ///< kept from an earlier report
  std::optional<double> seconds;
};

struct loop_report {
  std::optional<loop_result> outcome;     ///< nullopt: still running
  std::optional<std::string> control_result;  ///< the A/A or A/B control's result, when there was one
  std::optional<double> num_prompts, concurrency;
  std::vector<loop_warmup> warmups;
  std::optional<loop_design> design;
  std::vector<loop_run_row> initial_runs, after_runs;
  std::optional<std::vector<loop_run_row>> baseline_runs;  ///< nullopt: the series did not run
  std::vector<ranked_kernel> ranking;     ///< rank, name, calls, total_us, pct_total, disposition, why
  std::optional<loop_chosen> chosen;
  std::optional<gate_result> kernel;      ///< the compare gate; `win` when it had a winner
  std::map<std::string, metric_change> e2e;  ///< e2e.metrics by name
  std::optional<loop_prediction> prediction;
  std::optional<stop_reason> stop;
  std::string error;                      ///< why a step failed
  std::vector<loop_step_row> steps;
};

}  // namespace magpie::optimize
