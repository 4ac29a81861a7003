// JSON Schema of report.json as run_trace_report writes it (report.cpp: the trace summary, the
// input health, rules, the analysis and the steps), kept beside the writers so that a key added
// to one and not the other fails tests/unit/trace (closed objects). The MCP trace_report tool's
// output schema takes its `report` from here.
#pragma once

#include "core/json.h"

namespace magpie::trace {

json trace_report_schema();
/// The gap analysis block (gap_printer.h: gap_block_json = gap_result_json + csv_path, output_dir), as a
/// benchmark report's gap_analysis.
json gap_analysis_schema();

}  // namespace magpie::trace
