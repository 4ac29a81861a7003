// The benchmark tool's arguments: schema, decoder and YAML printer (see benchmark_args_codec.h).
#include "mcp/benchmark_args_codec.h"

#include <cctype>

#include "core/json_schema.h"

namespace magpie::mcp {

using namespace magpie::schema;  // the one schema library (core/json_schema.h)

const json& benchmark_args_schema() {
  static const json k = closed(
      {{"framework", s_enum("serving framework", {"vllm", "sglang", "atom"})},
       {"model", s_string("model id or local path")},
       {"precision", with_default(s_string("precision tag (fp8, fp16, bf16, fp4, mxfp4)"), "fp8")},
       {"run_mode", with_default(s_enum("run mode (ray: one Ray job configured by the ray_* arguments, docs/ray.md)",
                                        {"docker", "local", "ray"}), "docker")},
       {"tp", with_default(s_integer("tensor parallel size", 1), 1)},
       {"concurrency", with_default(s_integer("max concurrent requests", 1), 32)},
       {"input_len", or_null(with_default(s_integer("input tokens", 1), 1024))},
       {"output_len", or_null(with_default(s_integer("output tokens", 1), 512))},
       {"torch_profiler", or_null(with_default(s_boolean("record torch-profiler traces (Magpie's default: on)"), true))},
       {"torch_profiler_steps", s_integer("AgentX capture steps: accepted, not used (warning)", 1)},
       {"torch_profiler_count", s_integer("AgentX captures: accepted, not used (warning)", 1)},
       {"torch_profiler_interval_seconds", s_number("AgentX capture interval: accepted, not used (warning)", 0)},
       {"torch_profiler_start_seconds", s_number("AgentX capture start: accepted, not used (warning)", 0)},
       {"torch_profiler_detailed_annotations", s_boolean("accepted, not used (warning)")},
       {"system_profiler", with_default(s_boolean("Nsight Systems around a local server when nsys is present"), false)},
       {"tracelens", with_default(s_boolean("TraceLens-style inference trace analysis of the torch traces"), false)},
       {"tracelens_export_format", with_default(s_enum("TraceLens export format", {"csv", "excel"}), "csv")},
       {"gap_analysis_enabled", with_default(s_boolean("gap analysis of the traces"), false)},
       {"gap_analysis_top_k", s_integer("gap analysis top k", 1)},
       {"gap_analysis_start_pct", s_number("window start %", 0, 100)},
       {"gap_analysis_end_pct", s_number("window end %", 0, 100)},
       {"gap_analysis_min_duration_us", s_number("min event duration, us", 0)},
       {"gap_analysis_categories", or_null(s_array(s_string("category substring"), "categories kept"))},
       {"gap_analysis_ignore_categories", or_null(s_array(s_string("category substring"), "categories dropped"))},
       {"docker_image", or_null(s_string("image override"))},
       {"gpu_arch", or_null(s_string("GPU architecture override"))},
       {"hf_cache_path", or_null(s_string("Hugging Face cache mounted into the container"))},
       {"inferencex_path", s_string("InferenceX checkout: accepted, not used (warning)")},
       {"benchmark_script", or_null(s_string("InferenceX script: accepted, not used (warning)"))},
       {"runner_type", or_null(s_string("InferenceX runner type: accepted, not used (warning)"))},
       {"timeout_seconds", with_default(s_number("benchmark limit, s", 1), 3600)},
       {"output_dir", s_string("results directory (default ./results)")},
       {"extra_envs", s_any_object("extra envs (keys upper-cased, as Magpie)")},
       {"benchmark_config", s_any_object("extra keys merged into the benchmark: YAML")},
       {"extra_args", s_array(s_string("arg"), "extra `magpie benchmark` CLI arguments")},
       {"ray_cluster_address", s_string("run_mode ray: ray_config.cluster_address")},
       {"ray_shared_storage_path", s_string("run_mode ray: ray_config.shared_storage_path")},
       {"ray_num_gpus", s_number("run_mode ray: ray_config.entrypoint_num_gpus", 0)},
       {"ray_multi_node", s_boolean("run_mode ray: ray_config.multi_node")},
       {"ray_total_num_gpus", s_integer("run_mode ray: ray_config.total_num_gpus", 0)},
       {"ray_num_nodes", s_integer("run_mode ray: ray_config.num_nodes", 0)},
       {"agentx", with_default(s_boolean("AgentX recipes: not provided (true is a tool error)"), false)},
       {"agentx_mode", s_enum("AgentX mode: accepted, not used", {"canonical", "fast"})}},
      {"framework", "model"});
  return k;
}

namespace {

/// Reads `key` into `out` when it is given and not null (upstream Magpie's None).
template <typename T>
status read_given(const json_fields& f, const char* key, std::optional<T>* out) {
  const json* v = json_member(f.doc(), key);
  if (v == nullptr || v->is_null()) return ok_status();
  T x{};
  MAGPIE_RETURN_IF_ERROR(f.read(key, &x));
  *out = std::move(x);
  return ok_status();
}

/// An object argument (null or absent: none) or an error naming it.
status_or<const json*> object_arg(const json_fields& f, const char* key) {
  const json* v = json_member(f.doc(), key);
  if (v == nullptr || v->is_null()) return static_cast<const json*>(nullptr);
  if (!v->is_object()) return invalid_argument("%s: expected an object, got %s", f.field(key).c_str(), v->type_name());
  return v;
}

status decode_words(const json_fields& f, benchmark_args* r) {
  std::string framework, run_mode;
  MAGPIE_RETURN_IF_ERROR(f.require("framework", &framework));
  auto fw = serve::parse_serving_framework(framework);
  if (!fw) return invalid_argument("%s: unknown framework '%s' (vllm, sglang, atom)", f.field("framework").c_str(),
                                   framework.c_str());
  r->framework = *fw;
  MAGPIE_RETURN_IF_ERROR(f.read("run_mode", &run_mode));
  if (!run_mode.empty()) {
    auto mode = serve::parse_server_run_mode(run_mode);
    if (!mode) return invalid_argument("%s: unknown run mode '%s' (docker, local, ray)", f.field("run_mode").c_str(),
                                       run_mode.c_str());
    r->run_mode = *mode;
  }
  return ok_status();
}

status decode_profilers(const json_fields& f, benchmark_args* r) {
  MAGPIE_RETURN_IF_ERROR(f.read("torch_profiler", &r->torch_profiler));
  MAGPIE_RETURN_IF_ERROR(read_given(f, "torch_profiler_steps", &r->torch_profiler_steps));
  MAGPIE_RETURN_IF_ERROR(read_given(f, "torch_profiler_count", &r->torch_profiler_count));
  MAGPIE_RETURN_IF_ERROR(read_given(f, "torch_profiler_interval_seconds", &r->torch_profiler_interval_seconds));
  MAGPIE_RETURN_IF_ERROR(read_given(f, "torch_profiler_start_seconds", &r->torch_profiler_start_seconds));
  MAGPIE_RETURN_IF_ERROR(read_given(f, "torch_profiler_detailed_annotations", &r->torch_profiler_detailed_annotations));
  MAGPIE_RETURN_IF_ERROR(f.read("system_profiler", &r->system_profiler));
  MAGPIE_RETURN_IF_ERROR(read_given(f, "tracelens", &r->tracelens));
  MAGPIE_RETURN_IF_ERROR(f.read("tracelens_export_format", &r->tracelens_export_format));
  MAGPIE_RETURN_IF_ERROR(f.read("gap_analysis_enabled", &r->gap_analysis_enabled));
  MAGPIE_RETURN_IF_ERROR(f.read("gap_analysis_top_k", &r->gap_analysis_top_k));
  MAGPIE_RETURN_IF_ERROR(f.read("gap_analysis_start_pct", &r->gap_analysis_start_pct));
  MAGPIE_RETURN_IF_ERROR(f.read("gap_analysis_end_pct", &r->gap_analysis_end_pct));
  MAGPIE_RETURN_IF_ERROR(f.read("gap_analysis_min_duration_us", &r->gap_analysis_min_duration_us));
  MAGPIE_RETURN_IF_ERROR(read_given(f, "gap_analysis_categories", &r->gap_analysis_categories));
  return read_given(f, "gap_analysis_ignore_categories", &r->gap_analysis_ignore_categories);
}

status decode_ray(const json_fields& f, benchmark_ray_args* r) {
  MAGPIE_RETURN_IF_ERROR(f.read("ray_cluster_address", &r->cluster_address));
  MAGPIE_RETURN_IF_ERROR(f.read("ray_shared_storage_path", &r->shared_storage_path));
  MAGPIE_RETURN_IF_ERROR(f.read("ray_num_gpus", &r->num_gpus));
  MAGPIE_RETURN_IF_ERROR(f.read("ray_multi_node", &r->multi_node));
  MAGPIE_RETURN_IF_ERROR(f.read("ray_total_num_gpus", &r->total_num_gpus));
  return f.read("ray_num_nodes", &r->num_nodes);
}

}  // namespace

status_or<benchmark_args> decode_benchmark_args(const json& a) {
  const json_fields f(a, "benchmark arguments");
  MAGPIE_RETURN_IF_ERROR(f.check_object());
  const json& known = benchmark_args_schema()["properties"];
  for (auto it = a.begin(); it != a.end(); ++it)
    if (!known.contains(it.key())) return invalid_argument("benchmark arguments: unknown argument '%s'", it.key().c_str());
  benchmark_args r;
  MAGPIE_RETURN_IF_ERROR(decode_words(f, &r));
  MAGPIE_RETURN_IF_ERROR(f.require("model", &r.model));
  MAGPIE_RETURN_IF_ERROR(f.read("precision", &r.precision));
  for (auto [key, dst] : {std::pair{"tp", &r.tp}, {"concurrency", &r.concurrency}, {"input_len", &r.input_len},
                          {"output_len", &r.output_len}})
    MAGPIE_RETURN_IF_ERROR(f.read(key, dst));
  MAGPIE_RETURN_IF_ERROR(decode_profilers(f, &r));
  for (auto [key, dst] : {std::pair{"docker_image", &r.docker_image}, {"gpu_arch", &r.gpu_arch},
                          {"hf_cache_path", &r.hf_cache_path}, {"inferencex_path", &r.inferencex_path},
                          {"benchmark_script", &r.benchmark_script}, {"runner_type", &r.runner_type},
                          {"output_dir", &r.output_dir}, {"agentx_mode", &r.agentx_mode}})
    MAGPIE_RETURN_IF_ERROR(f.read(key, dst));
  MAGPIE_RETURN_IF_ERROR(f.read("timeout_seconds", &r.timeout_seconds));
  MAGPIE_ASSIGN_OR_RETURN(const json* envs, object_arg(f, "extra_envs"));
  if (envs != nullptr)
    for (auto it = envs->begin(); it != envs->end(); ++it) r.extra_envs.emplace_back(it.key(), it.value());
  MAGPIE_ASSIGN_OR_RETURN(const json* extra, object_arg(f, "benchmark_config"));
  if (extra != nullptr) r.benchmark_config = *extra;
  MAGPIE_RETURN_IF_ERROR(f.read("extra_args", &r.extra_args));
  MAGPIE_RETURN_IF_ERROR(decode_ray(f, &r.ray));
  MAGPIE_RETURN_IF_ERROR(f.read("agentx", &r.agentx));
  return r;
}

namespace {

json profiler_block(const benchmark_args& a) {
  json torch = {{"enabled", a.torch_profiler}};
  if (a.torch_profiler_steps) torch["num_steps"] = *a.torch_profiler_steps;
  if (a.torch_profiler_count) torch["num_profiles"] = *a.torch_profiler_count;
  if (a.torch_profiler_interval_seconds) torch["interval_seconds"] = *a.torch_profiler_interval_seconds;
  if (a.torch_profiler_start_seconds) torch["start_seconds"] = *a.torch_profiler_start_seconds;
  if (a.torch_profiler_detailed_annotations) torch["detailed_annotations"] = *a.torch_profiler_detailed_annotations;
  json profiler = {{"torch_profiler", torch}, {"system_profiler", {{"enabled", a.system_profiler}}}};
  if (a.tracelens)
    profiler["tracelens"] = {{"enabled", *a.tracelens},
                             {"export_format", a.tracelens_export_format},
                             {"multi_rank_report_enabled", a.tp > 1}};
  return profiler;
}

json gap_analysis_block(const benchmark_args& a) {
  json g = {{"enabled", true},
            {"top_k", a.gap_analysis_top_k},
            {"trace_start_pct", a.gap_analysis_start_pct},
            {"trace_end_pct", a.gap_analysis_end_pct},
            {"min_duration_us", a.gap_analysis_min_duration_us}};
  if (a.gap_analysis_categories) g["categories"] = *a.gap_analysis_categories;
  if (a.gap_analysis_ignore_categories) g["ignore_categories"] = *a.gap_analysis_ignore_categories;
  return g;
}

/// run_mode ray: one Ray job (src/cli/benchmark_ray.cpp) configured from the ray_* arguments;
/// given with another run mode, each is a warning.
json ray_config_block(const benchmark_args& a, std::vector<std::string>* warnings) {
  const benchmark_ray_args& r = a.ray;
  const std::pair<const char*, std::pair<const char*, json>> given[] = {
      {"ray_cluster_address", {"cluster_address", r.cluster_address.empty() ? json() : json(r.cluster_address)}},
      {"ray_shared_storage_path",
       {"shared_storage_path", r.shared_storage_path.empty() ? json() : json(r.shared_storage_path)}},
      {"ray_num_gpus", {"entrypoint_num_gpus", r.num_gpus != 0 ? json(r.num_gpus) : json()}},
      {"ray_multi_node", {"multi_node", r.multi_node ? json(true) : json()}},
      {"ray_total_num_gpus", {"total_num_gpus", r.total_num_gpus != 0 ? json(r.total_num_gpus) : json()}},
      {"ray_num_nodes", {"num_nodes", r.num_nodes != 0 ? json(r.num_nodes) : json()}}};
  const bool ray = a.run_mode == serve::server_run_mode::ray;
  json out = json::object();
  for (const auto& [arg, entry] : given) {
    if (entry.second.is_null()) continue;
    if (ray) out[entry.first] = entry.second;
    else warnings->push_back(std::string(arg) + " is used only with run_mode: ray (docs/ray.md); ignored for this run");
  }
  return out;
}

}  // namespace

json benchmark_yaml(const benchmark_args& a, std::vector<std::string>* warnings) {
  json envs = {{"TP", a.tp}, {"CONC", a.concurrency}, {"ISL", a.input_len}, {"OSL", a.output_len},
               {"RANDOM_RANGE_RATIO", 0.5}};
  for (const auto& [name, value] : a.extra_envs) {
    std::string key = name;
    for (auto& c : key) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));  // upstream upper-cases
    envs[key] = value;
  }
  json b = {{"framework", serve::serving_framework_name(a.framework)},
            {"model", a.model},
            {"precision", a.precision},
            {"run_mode", serve::server_run_mode_name(a.run_mode)},
            {"envs", envs},
            {"profiler", profiler_block(a)},
            {"timeout_seconds", a.timeout_seconds}};
  for (auto [key, value] : {std::pair{"docker_image", &a.docker_image}, {"gpu_arch", &a.gpu_arch},
                            {"inferencex_path", &a.inferencex_path}, {"benchmark_script", &a.benchmark_script},
                            {"runner_type", &a.runner_type}, {"hf_cache_path", &a.hf_cache_path}})
    if (!value->empty()) b[key] = *value;
  if (a.gap_analysis_enabled) b["gap_analysis"] = gap_analysis_block(a);
  json ray_config = ray_config_block(a, warnings);
  if (!ray_config.empty()) b["ray_config"] = ray_config;
  if (!a.agentx_mode.empty()) warnings->push_back("agentx_mode is accepted but not used (AgentX is not provided)");
  for (auto it = a.benchmark_config.begin(); it != a.benchmark_config.end(); ++it) b[it.key()] = it.value();
  return {{"benchmark", b}};
}

}  // namespace magpie::mcp
