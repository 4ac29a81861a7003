// report.json as run_trace_report writes it (schema: trace/report_schema.h, trace_report_schema)
// and the tracelens_analysis block of run_inference_analysis.
#pragma once

#include "core/json.h"
#include "trace/report_result.h"

namespace magpie::trace {

/// report.json "trace": the loaded trace's counts and its read statistics.
json trace_summary_json(const trace_summary& t);
/// report.json: {trace, input, output_files} for an unusable trace, else {trace, input, rules,
/// gpu_spec_choice, analysis, steps, output_files}.
json trace_report_json(const report_result& r);
/// Upstream Magpie's `tracelens_analysis` block (trace/api.h, run_inference_analysis): {enabled,
/// analysis_mode, engine, analysis_stages, export_format, tl_extension, trace_dir, split_dir,
/// capture_folder, output_dir, gpu_arch_platform, phase_picks, stage_results, rank0_trace,
/// input?, gpu_spec_choice?, split_source?, phase_method?, output_files, errors, warnings}.
json inference_result_json(const inference_result& r);

}  // namespace magpie::trace
