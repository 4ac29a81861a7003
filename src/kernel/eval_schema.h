// The JSON Schema of what kernel_eval_json writes (one entry of an analyze / compare report's
// results): kept beside the writer so that a key added to one and not the other fails
// tests/unit/mcp/report_schema_test.cpp. The MCP analyze tool's output schema takes its
// properties from here.
#pragma once

#include "core/json.h"

namespace magpie::kernel {

/// A closed object: every key kernel_eval_json writes, with the state words of its codecs.
json kernel_eval_schema();

/// kernel_spec::to_json (a report entry's kernel_config).
json kernel_spec_schema();
/// correctness_policy / timing_policy / compare_policy ::to_json.
json correctness_policy_schema();
json timing_policy_schema();
json compare_policy_schema();
/// timing_result_json (kernel/timing_printer.h: an entry's timing).
json timing_result_schema();

/// The whole analyze_report.json / compare_report.json as run.cpp writes it (local runs) and
/// sched's merge writes it (batches add "scheduler", given here as `scheduler`; null: none).
/// `mode` "analyze" or "compare"; "any" accepts both (results as an array or an object).
json kernel_report_schema(const std::string& mode, const json& scheduler = nullptr);

}  // namespace magpie::kernel
