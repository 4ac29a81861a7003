// `magpie optimize`: the optimization loop of docs/optimization-loop.md as one command.
// Steps (the report's `steps.<name>`, in order):
//   start_server, calibrate, baseline_benchmarks, profiled_run, trace_analysis, choose_kernel,
//   compare, switch_in, after_benchmarks, inputs_check, e2e
// Outcome: improved | stopped (a decision, `stop`) | failed (a step could not run, `error`) |
// paused (--until: the run ended after the named step; resume with --from-step).
// Writes <workspace>/loop_report.json after every step and loop_report.md at the end.
#pragma once

#include <string>
#include <vector>

#include "optimize/config.h"
#include "optimize/loop_report.h"

namespace magpie::optimize {

extern const std::vector<std::string> k_steps;

struct loop_options {
  fs::path workspace;         ///< this run's directory (created when missing)
  fs::path resume_from;       ///< workspace whose loop_report.json provides the steps before from_step
  std::string from_step;      ///< "" = the first step
  std::string until;          ///< "" = to the end; else stop after this step (outcome "paused")
  std::string python = "python3";  ///< {python} of the server command
  fs::path self_exe;          ///< this binary (magpie subcommands run as its children)
};

struct loop_outcome {
  loop_result outcome = loop_result::failed;
  bool control_failed = false;  ///< an A/A control came out beyond noise
  loop_report report;           ///< print with optimize/report_printer.h
  fs::path report_json, report_md;
};

/// Runs the loop. A status error means nothing could run (bad resume source, workspace not
/// writable); every later problem is in the report (outcome failed / stopped).
status_or<loop_outcome> run_loop(const optimize_config& cfg, const loop_options& opts);

}  // namespace magpie::optimize
