// Output schemas shared by several tools (run handles, benchmark and optimize results) and the
// check that keeps a value read from another program's file true to its schema.
#pragma once

#include <string>

#include "core/json.h"

namespace magpie::mcp {

/// Output schema of a run handle's status (run_registry::to_json): benchmark_status,
/// optimize_status, jobs/ray status of run handles. info and result are the union of what the
/// benchmark and optimize tools record (closed).
json run_status_schema();
/// The properties of a finished benchmark run's result (finished_benchmark, tools_bench.cpp).
json benchmark_result_props();
/// The properties of the optimize loop's progress / result (loop_progress, tools_optimize.cpp).
json loop_progress_props();
/// A value read from a file another program may have written (a Magpie workspace): itself when
/// it validates against `schema`, else null and a warning naming `what` (the tool's output
/// stays true to its schema).
json checked_value(const json& value, const json& schema, const std::string& what, json* warnings);

}  // namespace magpie::mcp
