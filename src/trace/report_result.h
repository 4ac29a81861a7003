// What run_trace_report (trace/api.h) returns: the single-trace report as types. Printed as
// report.json by trace_report_json (trace/report_printer.h; schema: trace_report_schema).
#pragma once

#include <memory>
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
