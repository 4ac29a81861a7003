// JSON of a compare result (kernel/compare.h): the keys it adds to a compare report's results,
// and their JSON Schema. Written by the local compare (kernel/run.cpp) and the merge of a Slurm /
// Ray batch (sched/merge_compare.cpp).
#pragma once

#include "core/json.h"
#include "kernel/compare.h"

namespace magpie::kernel {

/// Upstream Magpie's results keys: comparison_metrics (with `as_expected`: every kernel's
/// correctness matches its `expect`), winner, winner_reason, rankings, baseline_index and
/// verdicts (each verdict's confidence: `confidence`), added to `results`.
void write_compare_result(const compare_result& cr, double confidence, json& results);

/// JSON Schema of what write_compare_result adds to a report's results (the compare MCP tool's
/// output schema takes these properties; compare_test keeps them in step with the writer).
json compare_result_schema();

/// One entry of a compare report's `verdicts`: {index, kernel_id, verdict, speedup_vs_baseline,
/// ci_low, ci_high, confidence, interval_df, median_ns (null: none), reason, same_band, power, decide}.
json verdict_json(const verdict& v, const std::string& id, double confidence, double median_ns);
/// {band, floor, ceiling, aa_sd, aa_processes, basis}
json same_band_json(const same_band& b);
/// {difference, probability, statement}
json power_statement_json(const power_statement& p);

}  // namespace magpie::kernel
