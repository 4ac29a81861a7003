// What run_trace_report (trace/api.h) returns: the single-trace report as types. Printed as
// report.json by trace_report_json (trace/report_printer.h; schema: trace_report_schema).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/specs.h"
#include "trace/analysis.h"
#include "trace/health.h"
#include "trace/model.h"
#include "trace/stages.h"

namespace magpie::trace {

struct report_result {
  trace_summary trace;  ///< the loaded trace's counts
  input_health input;   ///< ok | partial | unusable (then nothing below is set and no file is written)
  bool tracelens_compat = false;  ///< which rules produced the numbers (report_config::tracelens_compat)
  std::string gpu_spec_choice;    ///< how the roofline's GPU spec was chosen (spec_choice::how)
  /// The spec `analysis.spec` points at, owned here so copies of the result stay valid.
  std::shared_ptr<const gpu::gpu_spec> spec;
  trace::analysis analysis;
  stage_split steps;
  std::vector<std::string> output_files;  ///< report.json first; empty when unusable
};

}  // namespace magpie::trace

namespace magpie::trace {

/// One stage of run_inference_analysis: the picked step and, when one was picked, its files.
struct stage_result {
  inference_stage stage = inference_stage::prefilldecode;
  fs::path trace_path;              ///< the rank-0 trace
  phase_pick pick;                  ///< which step (index into inference_result::split.steps)
  fs::path output_dir;              ///< <out_dir>/<label>
  std::string error;                ///< why no step was picked (pick.step empty); then nothing below is set
  std::vector<std::string> files;   ///< ops/kernels/ops_by_name/gpu_timeline CSVs (+ xlsx)
  fs::path simple_summary_file;     ///< <label>_ISL…_kernel_roofline_simple.csv
  trace::analysis analysis;         ///< of the picked step's GPU events
};

/// What run_inference_analysis (trace/api.h) returns: upstream Magpie's `tracelens_analysis` block as
/// types, printed by inference_result_json (trace/report_printer.h).
struct inference_result {
  std::vector<inference_stage> stages;  ///< in the requested order (no duplicates)
  std::string export_format;
  fs::path trace_dir, out_dir;
  bool tracelens_compat = false;
  std::optional<fs::path> rank0_trace;  ///< nullopt: none found (an error says so)
  std::optional<input_health> input;    ///< nullopt: the trace could not be loaded
  /// Set once the trace was usable: how the spec was chosen, the spec (what each stage's
  /// analysis.spec points at), the step split and one result per stage (order of `stages`).
  bool analysed = false;
  std::string gpu_spec_choice;
  std::shared_ptr<const gpu::gpu_spec> spec;
  stage_split split;
  std::vector<stage_result> stage_results;
  std::vector<std::string> output_files, errors, warnings;
};

}  // namespace magpie::trace
