#include "sched/options.h"

#include "core/strings.h"
#include "core/yaml.h"
#include "sched/options_codec.h"

namespace magpie::sched {

json scheduler_options_json(const scheduler_options& s) {
  return {{"environment", s.environment.value_or(run_environment::local)}, {"max_workers", s.max_workers},
          {"docker_image", s.docker_image.empty() ? json(nullptr) : json(s.docker_image)}, {"gpu_devices", s.gpu_devices},
          {"partition", s.partition}, {"account", s.account}, {"qos", s.qos}, {"constraint", s.constraint}, {"gres", s.gres},
          {"time_limit", s.time_limit}, {"timing_time_limit", s.timing_time_limit}, {"mem", s.mem},
          {"cpus_per_task", s.cpus_per_task}, {"shared_dir", s.shared_dir}, {"magpie_bin", s.magpie_bin},
          {"sbatch_args", s.sbatch_args}, {"setup", s.setup}, {"poll_seconds", s.poll_s}, {"wait", s.wait},
          {"ray_config", ray_options_json(s.ray)}};
}

status parse_scheduler_section(const config_node& n, const std::string& field, scheduler_options* out) {
  if (!n.is_map()) return config_error(n, field, "expected a mapping");
  field_reader r(n, field);
  if (const config_node* e = r.get("environment")) {
    std::optional<run_environment> env = e->is_scalar() ? parse_run_environment(to_lower(e->text)) : std::nullopt;
    if (!env) return config_error(*e, r.field("environment"), "expected local, container, ray or slurm");
    out->environment = env;
  }
  int64_t v = out->max_workers;
  MAGPIE_RETURN_IF_ERROR(r.read_int("max_workers", &v));
  out->max_workers = static_cast<int>(v);
  MAGPIE_RETURN_IF_ERROR(r.read_string("docker_image", &out->docker_image));
  if (const config_node* g = r.get("gpu_devices")) {
    if (!g->is_sequence()) return config_error(*g, r.field("gpu_devices"), "expected a list of device indices");
    out->gpu_devices.clear();
    for (const auto& item : g->items) {
      auto d = parse_int(item.text);
      if (!item.is_scalar() || !d || *d < 0) return config_error(item, r.field("gpu_devices"), "expected a device index");
      out->gpu_devices.push_back(*d);
    }
  }
  for (auto [key, dst] : {std::pair{"partition", &out->partition}, {"account", &out->account}, {"qos", &out->qos},
                          {"constraint", &out->constraint}, {"gres", &out->gres}, {"time_limit", &out->time_limit},
                          {"timing_time_limit", &out->timing_time_limit}, {"mem", &out->mem},
                          {"shared_dir", &out->shared_dir}, {"magpie_bin", &out->magpie_bin}})
    MAGPIE_RETURN_IF_ERROR(r.read_string(key, dst));
  v = out->cpus_per_task;
  MAGPIE_RETURN_IF_ERROR(r.read_int("cpus_per_task", &v));
  if (v < 1) return config_error(*n.get("cpus_per_task"), r.field("cpus_per_task"), "expected >= 1");
  out->cpus_per_task = static_cast<int>(v);
  MAGPIE_RETURN_IF_ERROR(r.read_string_list("sbatch_args", &out->sbatch_args));
  MAGPIE_RETURN_IF_ERROR(r.read_string_list("setup", &out->setup));
  double poll = out->poll_s;
  MAGPIE_RETURN_IF_ERROR(r.read_double("poll_seconds", &poll));
  if (poll <= 0) return config_error(*n.get("poll_seconds"), r.field("poll_seconds"), "expected > 0");
  out->poll_s = poll;
  MAGPIE_RETURN_IF_ERROR(r.read_bool("wait", &out->wait));
  for (const char* magpie_key : {"timeout_seconds", "pre_hooks", "post_hooks", "ray_cluster_address", "ray_shared_storage_path"})
    r.allow(magpie_key);
  return r.check_unknown();
}

status load_scheduler_sections(const fs::path& kernel_yaml, scheduler_options* out) {
  MAGPIE_ASSIGN_OR_RETURN(config_node root, load_yaml_file(kernel_yaml));
  if (!root.is_map()) return ok_status();  // kernel::load_kernel_config reports the shape
  if (const config_node* sc = root.get("scheduler"))
    MAGPIE_RETURN_IF_ERROR(parse_scheduler_section(*sc, "scheduler", out));
  if (const config_node* rc = root.get("ray_config")) {
    MAGPIE_RETURN_IF_ERROR(parse_ray_config(*rc, "ray_config", out));
    if (!out->environment) out->environment = run_environment::ray;
  }
  return ok_status();
}

status check_environment(std::optional<run_environment> env) {
  if (env != run_environment::container) return ok_status();
  return error(status_code::failed_precondition,
               "the container environment is not provided (Magpie's own ContainerExecutor is a stub); run magpie "
               "inside the container, or use -e slurm / -e ray / -e local");
}

status_or<std::optional<run_environment>> environment_from_flag(const std::string& word) {
  if (word.empty()) return std::optional<run_environment>();
  std::optional<run_environment> env = parse_run_environment(word);
  if (!env) return invalid_argument("unknown environment '%s' (local, slurm, ray)", word.c_str());
  return env;
}

}  // namespace magpie::sched
