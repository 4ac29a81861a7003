// A run comparison (store/compare.h) as JSON, and its schema (`magpie results compare --json`,
// the MCP compare_results tool).
#pragma once

#include "core/json.h"
#include "store/compare.h"

namespace magpie::store {

/// The schema of comparison_to_json (closed; numbers that can be undefined are nullable).
json comparison_schema();
json comparison_to_json(const comparison& c, const compare_options& opts);

}  // namespace magpie::store
