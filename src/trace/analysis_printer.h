// The trace analysis as JSON (report.json's "trace" read block, "analysis", "rules", "steps";
// the tracelens_analysis stage blocks): the printers of the typed results of analysis.h,
// timeline.h, stages.h, annotations.h and reader.h. Their schemas: trace/report_schema.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "core/json.h"
#include "trace/analysis.h"
#include "trace/annotations.h"
#include "trace/reader.h"
#include "trace/stages.h"
#include "trace/timeline.h"

namespace magpie::trace {

/// TraceLens gpu_timeline rows: [{type, "time ms", percent}].
json timeline_json(const timeline_breakdown& t);
/// Communication in exact ns: total (|COMM|), exposed (|COMM − COMP|), overlapped with
/// computation (total − exposed) and that share of the total.
json communication_json(const timeline_breakdown& t);
/// The tables of an analysis (first `max_rows` rows of each; 0: all).
json analysis_json(const analysis& a, size_t max_rows = 0);
/// Which rules produced the numbers (report.json "rules").
json rules_json(bool tracelens_compat, const analysis& a);
/// The split's steps, notes and per-stage picks (report.json "steps").
json split_json(const stage_split& s, std::optional<int64_t> conc);
json phase_pick_json(const phase_pick& p, const stage_split& s);
json step_annotation_json(const step_annotation& a);
/// What the reader saw (report.json "trace"."read", the gap analysis's ranks[]."read").
json read_stats_json(const read_stats& s);

}  // namespace magpie::trace
