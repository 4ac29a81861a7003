// Run handles as the run tools report them (benchmark_status, optimize_status, ray_task_*).
#pragma once

#include <vector>

#include "core/json.h"
#include "mcp/run_registry.h"

namespace magpie::mcp {

/// {run_id, tool, state: queued|running|succeeded|failed|cancelled|timed_out, elapsed_s, info
///  (the run_info pairs in order), log_tail[], result? (when not null), error? (when set)}, keys in
///  this order; its schema is run_status_schema() (mcp/tool_schema.h).
json run_view_json(const run_view& v);
/// An array of run_view_json.
json run_views_json(const std::vector<run_view>& views);

}  // namespace magpie::mcp
