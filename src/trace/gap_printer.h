// The gap analysis as JSON: upstream Magpie's result dict and the report's gap_analysis block
// (their schema: trace/report_schema.h, gap_analysis_schema). The CSVs and the console table
// are in gap_analysis.h (gap_csv, gap_console_summary).
#pragma once

#include <optional>

#include "core/fs.h"
#include "core/json.h"
#include "trace/gap_analysis.h"

namespace magpie::trace {

/// Upstream Magpie's result dict (config, total_duration_us, num_ranks, top_kernels, clamped_trace_paths,
/// errors) plus "ranks", "warnings", "input" and "discovery".
json gap_result_json(const gap_result& r);
/// The `gap_analysis` block: gap_result_json plus csv_path (null: none written) and output_dir.
json gap_block_json(const gap_result& r, const std::optional<fs::path>& csv_path, const fs::path& output_dir);
json gap_block_json(const gap_outputs& g);

}  // namespace magpie::trace
