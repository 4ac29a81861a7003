// report.json as run_trace_report writes it (schema: trace/report_schema.h, trace_report_schema).
#pragma once

#include "core/json.h"
#include "trace/report_result.h"

namespace magpie::trace {

/// report.json "trace": the loaded trace's counts and its read statistics.
json trace_summary_json(const trace_summary& t);
/// report.json: {trace, input, output_files} for an unusable trace, else {trace, input, rules,
/// gpu_spec_choice, analysis, steps, output_files}.
json trace_report_json(const report_result& r);

}  // namespace magpie::trace
