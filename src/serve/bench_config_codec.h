// The benchmark configuration as JSON: config.yaml's `benchmark:` mapping and the report's config.
#pragma once

#include "core/json.h"
#include "serve/bench_config.h"

namespace magpie::serve {

/// The effective configuration (every default filled in).
json benchmark_config_json(const benchmark_config& b);
/// The schema of benchmark_config_json (a benchmark report's config). The tracelens and
/// gap_analysis blocks are the user's, as given: maps of scalars, lists of scalars or flat maps.
json benchmark_config_schema();

}  // namespace magpie::serve
