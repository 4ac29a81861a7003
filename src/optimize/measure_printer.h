// The measuring side of the loop (optimize/measure.h) as the loop report's JSON: servers,
// benchmark runs and their metrics.
#pragma once

#include "core/json.h"
#include "optimize/measure.h"

namespace magpie::optimize {

/// {tag, variant, url, argv, log, ready_s, info, exit}
json variant_server_json(const variant_server& s);
/// The metrics of a run as the report's JSON (nulls where absent).
json metrics_json(const run_metrics& m);
/// {workspace, url, server, metrics, fingerprint, fingerprint_parts}
json bench_result_json(const bench_result& r);

}  // namespace magpie::optimize
