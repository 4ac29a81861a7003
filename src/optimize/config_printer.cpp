#include "optimize/config_printer.h"

namespace magpie::optimize {

json optimize_config_json(const optimize_config& c) {
  json ops_j = json::object();
  for (const auto& o : c.ops) {
    json cands = json::object();
    for (const auto& [id, impl] : o.candidates) cands[id] = impl;
    ops_j[o.name] = {{"compare", o.compare_yaml.string()}, {"baseline_id", o.baseline_id}, {"kernels", o.kernels}, {"candidates", cands}};
  }
  json repos = json::array();
  for (const auto& p : c.source_repos) repos.push_back(p.string());
  return {{"path", c.path.string()},
          {"name", c.name},
          {"server", {{"command", c.server.command}, {"baseline", c.server.baseline}, {"variant", c.server.variant},
                      {"info_path", c.server.info_path}, {"identity_keys", c.server.identity_keys}}},
          {"sources", {{"repos", repos}, {"min_confidence", c.decision.min_confidence}}},
          {"gap", {{"start_pct", c.gap.start_pct}, {"end_pct", c.gap.end_pct}, {"top_k", c.gap.top_k}}},
          {"compare", {{"max_time_s", c.compare_max_time_s}}},
          {"ops", ops_j},
          {"e2e", {{"order", c.e2e.order}, {"servers", c.e2e.servers}, {"pairs", c.e2e.pairs}, {"max_pairs", c.e2e.max_pairs},
                   {"target_mde_pct", c.e2e.target_mde_pct}, {"power", c.e2e.power}, {"max_series_s", c.e2e.max_series_s},
                   {"control", c.e2e.control}}},
          {"decision", {{"alpha", c.decision.alpha}, {"min_confidence", c.decision.min_confidence}, {"metrics", c.decision.metrics}}}};
}

}  // namespace magpie::optimize
