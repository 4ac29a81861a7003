// The metrics of a benchmark run (optimize/measure.h) as the loop report writes them (the
// report's other blocks: optimize/loop_report_codec.h).
#pragma once

#include "core/json.h"
#include "optimize/measure.h"

namespace magpie::optimize {

/// The metrics of a run as the report's JSON (nulls where absent).
json metrics_json(const run_metrics& m);

}  // namespace magpie::optimize
