#include "mcp/run_view_printer.h"

namespace magpie::mcp {

json run_view_json(const run_view& v) {
  json info = json::object();
  for (const auto& [k, val] : v.info) info[k] = val;
  json j = {{"run_id", v.run_id}, {"tool", v.tool}, {"state", run_state_name(v.state)}, {"elapsed_s", v.elapsed_s},
            {"info", info}, {"log_tail", v.log_tail}};
  if (!v.result.is_null()) j["result"] = v.result;
  if (!v.error.empty()) j["error"] = v.error;
  return j;
}

json run_views_json(const std::vector<run_view>& views) {
  json a = json::array();
  for (const auto& v : views) a.push_back(run_view_json(v));
  return a;
}

}  // namespace magpie::mcp
