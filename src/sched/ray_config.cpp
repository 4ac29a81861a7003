// Magpie's ray_config section (RayConfig in Magpie's benchmark config, the kernel YAML's
// top-level ray_config): the fields the Ray Jobs engine of src/sched uses, the rest accepted.
#include "core/log.h"
#include "core/strings.h"
#include "sched/options.h"
#include "sched/options_codec.h"
#include "core/yaml_json.h"

namespace magpie::sched {

json ray_options_json(const ray_options& o) {
  auto map = [](const env_list& l) {
    json o = json::object();
    for (const auto& [k, v] : l) o[k] = v;
    return o;
  };
  return {{"cluster_address", o.cluster_address.empty() ? json("auto") : json(o.cluster_address)},
          {"entrypoint_num_cpus", o.entrypoint_num_cpus >= 0 ? json(o.entrypoint_num_cpus) : json(nullptr)},
          {"entrypoint_num_gpus", o.entrypoint_num_gpus >= 0 ? json(o.entrypoint_num_gpus) : json(nullptr)},
          {"env_vars", map(o.env_vars)},
          {"runtime_env", o.runtime_env},
          {"metadata", map(o.metadata)}};
}

namespace {

status read_resource(field_reader& r, const char* key, double* out) {
  const config_node* n = r.get(key);
  if (!n) return ok_status();
  auto v = n->is_scalar() ? parse_double(n->text) : std::nullopt;
  if (!v || *v < 0) return config_error(*n, r.field(key), "expected a number >= 0");
  *out = *v;
  return ok_status();
}

// runtime_env: env_vars merge with ray_config.env_vars; every other key goes to Ray as given.
status read_runtime_env(const config_node& n, const std::string& field, ray_options* out) {
  if (!n.is_map()) return config_error(n, field, "expected a mapping (Ray's runtime_env)");
  json j = config_node_json(n);
  if (n.get("env_vars")) {
    field_reader r(n, field);
    env_list vars;
    MAGPIE_RETURN_IF_ERROR(r.read_string_map("env_vars", &vars));
    out->env_vars.insert(out->env_vars.end(), vars.begin(), vars.end());
    j.erase("env_vars");
  }
  if (!j.empty()) out->runtime_env = j;
  return ok_status();
}

}  // namespace

status parse_ray_config(const config_node& n, const std::string& field, scheduler_options* out) {
  if (n.is_null()) return ok_status();
  if (!n.is_map()) return config_error(n, field, "expected a mapping");
  field_reader r(n, field);
  ray_options& ray = out->ray;
  MAGPIE_RETURN_IF_ERROR(r.read_string("cluster_address", &ray.cluster_address));
  if (to_lower(ray.cluster_address) == "auto") ray.cluster_address.clear();
  std::string shared;
  MAGPIE_RETURN_IF_ERROR(r.read_string("shared_storage_path", &shared));
  if (!shared.empty() && out->shared_dir.empty()) out->shared_dir = shared;
  MAGPIE_RETURN_IF_ERROR(read_resource(r, "entrypoint_num_cpus", &ray.entrypoint_num_cpus));
  MAGPIE_RETURN_IF_ERROR(read_resource(r, "entrypoint_num_gpus", &ray.entrypoint_num_gpus));
  MAGPIE_RETURN_IF_ERROR(r.read_string_map("env_vars", &ray.env_vars));
  MAGPIE_RETURN_IF_ERROR(r.read_string_map("metadata", &ray.metadata));
  if (const config_node* re = r.get("runtime_env")) MAGPIE_RETURN_IF_ERROR(read_runtime_env(*re, r.field("runtime_env"), &ray));
  // Magpie's keys for installing Magpie on the cluster and for multi-node vLLM: magpie jobs run
  // one static binary from the shared path (scheduler.magpie_bin), so they do not apply.
  std::vector<std::string> unused;
  for (const char* k : {"pip_packages", "install_magpie", "magpie_install_path", "multi_node", "total_num_gpus",
                        "num_nodes", "gpus_per_node"}) {
    const config_node* v = r.get(k);
    if (!v || v->is_null()) continue;
    json j = config_node_json(*v);
    bool matters = !(j.is_array() && j.empty()) && !(json_as_bool(j) == false && std::string(k) == "multi_node");
    if (matters) unused.push_back(k);
  }
  if (!unused.empty())
    MAGPIE_LOG_WARN("%s: %s: not used by magpie (its jobs run the magpie binary from the shared path, one node each)",
                    n.where().c_str(), join(unused, ", ").c_str());
  return r.check_unknown();
}

}  // namespace magpie::sched
