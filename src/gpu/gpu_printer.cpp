#include "gpu/gpu_printer.h"

namespace magpie::gpu {

json gpu_info_json(const gpu_info& g) {
  json j;
  j["vendor"] = g.vendor;
  j["architecture"] = g.architecture.empty() ? json(nullptr) : json(g.architecture);
  j["compiler"] = g.compiler.empty() ? json(nullptr) : json(g.compiler);
  j["profiler"] = g.profiler.empty() ? json(nullptr) : json(g.profiler);
  j["driver_version"] = g.driver_version.empty() ? json(nullptr) : json(g.driver_version);
  j["devices"] = json::array();
  for (const auto& d : g.devices) {
    j["devices"].push_back({{"index", d.index}, {"name", d.name}, {"uuid", d.uuid},
                            {"memory_total_mib", d.memory_total_mib}, {"memory_used_mib", d.memory_used_mib},
                            {"compute_cap", d.compute_cap}});
  }
  return j;
}

json selection_json(const selection& s) {
  json j;
  j["vendor"] = s.vendor;
  j["indices"] = s.indices;
  json e = json::object();
  for (const auto& [k, v] : s.env) e[k] = v;
  j["env"] = e;
  json obs = json::array();
  for (const auto& g : s.observed)
    obs.push_back({{"index", g.index}, {"uuid", g.uuid}, {"memory_used_mib", g.memory_used_mib},
                   {"memory_total_mib", g.memory_total_mib}, {"processes", g.processes},
                   {"utilization_pct", g.utilization_pct < 0 ? json(nullptr) : json(g.utilization_pct)}});
  j["observed"] = obs;
  j["busy"] = s.busy;
  return j;
}

json gpu_spec_json(const gpu_spec& s) {
  json j;
  j["name"] = s.name;
  j["mem_bw_gbps"] = s.mem_bw_gbps;
  if (s.memory_gb > 0) j["memory_gb"] = s.memory_gb;
  json t = json::object();
  for (const auto& [k, v] : s.tflops) t[k] = v;
  j["max_achievable_tflops"] = t;
  if (!s.source.empty()) j["_source"] = s.source;
  if (!s.key_source.empty()) {
    json ks = json::object();
    for (const auto& [k, v] : s.key_source) ks[k] = v;
    j["_key_source"] = ks;
  }
  if (!s.reference.empty()) j["_reference"] = s.reference;
  return j;
}

}  // namespace magpie::gpu
