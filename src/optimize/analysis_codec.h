// The outputs of magpie trace's subcommands that the loop's trace_analysis step reads back
// (`trace report --json`, `trace stages --json`, `trace sources --json`, the stage roofline
// CSVs), decoded into the report's compact analysis summary (optimize/loop_report.h).
#pragma once

#include "core/json.h"
#include "optimize/loop_report.h"

namespace magpie::optimize {

/// Timeline, top kernels/ops, stage picks with their top roofline rows, sources summary. A
/// document that is `{"error": ...}` (the command failed) is carried into the summary.
analysis_summary summarize_analysis(const json& report, const json& stages, const json& sources, const fs::path& gap_csv);

}  // namespace magpie::optimize
