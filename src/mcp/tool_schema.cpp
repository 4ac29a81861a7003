// Output schemas shared by several tools (see tool_schema.h).
#include "mcp/tool_schema.h"

#include "core/json_schema.h"
#include "mcp/run_registry.h"

namespace magpie::mcp {

using namespace magpie::schema;  // the one schema library (core/json_schema.h)

/// A run handle's status (run_registry::to_json).
json run_status_schema() {
  json info = s_object({{"framework", s_string("benchmark: framework")}, {"model", s_string("benchmark: model")},
                        {"config_file", s_string("benchmark: the generated YAML")},
                        {"output_dir", s_string("benchmark: results directory")},
                        {"config", s_string("optimize: its optimize.yaml")}, {"workspace", s_string("optimize: its workspace")}},
                       {});
  info["description"] = "what was started";
  json result = {{"type", "object"}, {"additionalProperties", false}, {"properties", benchmark_result_props()},
                 {"description", "when finished: Magpie's BenchmarkResult keys + workspace, summary_text (benchmark), or "
                                 "the loop's progress (optimize)"}};
  const json loop = loop_progress_props();
  for (auto it = loop.begin(); it != loop.end(); ++it) result["properties"][it.key()] = it.value();
  return s_object({{"run_id", s_string("handle")}, {"tool", s_string("tool that started it")},
                   {"state", s_enum("state", run_state_names())},
                   {"elapsed_s", s_number("seconds since start", 0)}, {"info", info},
                   {"log_tail", s_array(s_string("line"), "last log lines")},
                   {"result", result},
                   {"error", s_string("why it failed")}},
                  {"run_id", "tool", "state", "elapsed_s", "info", "log_tail"});
}

json checked_value(const json& value, const json& schema, const std::string& what, json* warnings) {
  std::string problem = validate(schema, value);
  if (problem.empty()) return value;
  if (warnings) warnings->push_back(what + " left out: it is not in magpie's format (" + problem + ")");
  return nullptr;
}

}  // namespace magpie::mcp
