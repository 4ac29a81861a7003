#include "serve/bench_config.h"

#include <algorithm>
#include <cctype>

#include "core/strings.h"
#include "core/yaml.h"
#include "serve/sha256.h"

namespace magpie::serve {

std::string benchmark_config::env(const std::string& key, const std::string& dflt) const {
  for (const auto& [k, v] : envs)
    if (k == key) return v;
  return dflt;
}

int64_t benchmark_config::env_int(const std::string& key, int64_t dflt) const {
  auto v = parse_int(trim(env(key)));
  return v ? *v : dflt;
}

double benchmark_config::env_double(const std::string& key, double dflt) const {
  auto v = parse_double(trim(env(key)));
  return v ? *v : dflt;
}

void benchmark_config::set_env(const std::string& key, const std::string& value) {
  for (auto& [k, v] : envs)
    if (k == key) {
      v = value;
      return;
    }
  envs.emplace_back(key, value);
}

bool benchmark_config::profiling_requested() const {
  return profiler.torch_profiler || profiler.tracelens_enabled || gap_analysis_enabled;
}

std::string benchmark_config::effective_run_kind() const {
  if (run_kind != "auto") return run_kind;
  return profiling_requested() ? "diagnostic" : "measurement";
}

env_list default_envs() {
  return {{"TP", "1"}, {"CONC", "32"}, {"ISL", "1024"}, {"OSL", "512"}, {"RANDOM_RANGE_RATIO", "0.5"}};
}

json benchmark_config::to_json() const {
  json j;
  j["framework"] = framework;
  j["model"] = model;
  j["precision"] = precision;
  j["run_mode"] = run_mode;
  j["run_kind"] = run_kind;
  json e = json::object();
  for (const auto& [k, v] : envs) e[k] = v;
  j["envs"] = e;
  j["profiler"] = {{"torch_profiler", {{"enabled", profiler.torch_profiler}, {"profile_prompts", profiler.profile_prompts},
                                       {"trace_wait_s", profiler.trace_wait_s}, {"vllm_profiler_args", profiler.vllm_profiler_args}}},
                   {"tracelens", profiler.tracelens}};
  j["gap_analysis"] = gap_analysis;
  j["gpu_selection"] = {{"auto", gpu_selection.auto_select}, {"min_free_memory_gb", gpu_selection.min_free_memory_gb},
                        {"count", gpu_selection.count ? json(gpu_selection.count) : json(nullptr)},
                        {"candidates", gpu_selection.candidates.empty() ? json(nullptr) : json(gpu_selection.candidates)}};
  j["docker_image"] = docker_image.empty() ? json(nullptr) : json(docker_image);
  j["gpu_arch"] = gpu_arch.empty() ? json(nullptr) : json(gpu_arch);
  j["hf_cache_path"] = hf_cache_path;
  j["timeout_seconds"] = timeout_seconds;
  const client_settings& c = client;
  j["client"] = {{"endpoint", c.endpoint}, {"dataset_name", c.dataset_name}, {"dataset_path", c.dataset_path},
                 {"num_prompts", c.num_prompts}, {"max_concurrency", c.max_concurrency},
                 {"random_input_len", c.random_input_len}, {"random_output_len", c.random_output_len},
                 {"random_range_ratio", c.random_range_ratio ? json(*c.random_range_ratio) : json(nullptr)},
                 {"request_rate", c.request_rate > 0 ? json(c.request_rate) : json("inf")}, {"burstiness", c.burstiness},
                 {"num_warmups", c.num_warmups}, {"seed", c.seed}, {"ignore_eos", c.ignore_eos},
                 {"continuous_usage", c.continuous_usage}, {"goodput", c.goodput}, {"percentiles", c.percentiles},
                 {"request_timeout_s", c.request_timeout_s}, {"served_model_name", c.served_model_name}};
  j["server"] = {{"port", server.port}, {"ready_timeout_s", server.ready_timeout_s}, {"stop_grace_s", server.stop_grace_s}, {"extra_args", server.extra_args},
                 {"command", server.command}};
  if (!base_url.empty()) j["base_url"] = base_url;
  return j;
}

namespace {

// Magpie keys that configure parts magpie does differently (InferenceX scripts, Ray, server
// reuse, lm-eval, AgentX): accepted so existing files load, reported as ignored.
const char* const k_ignored_keys[] = {"inferencex_path", "inferencemax_path", "benchmark_script", "runner_type",
                                      "ray_config", "server_lifecycle", "run_cmd", "lm_eval_runtime", "agentx",
                                      "image_config"};

status read_int_field(field_reader& r, const std::string& key, int64_t* out) { return r.read_int(key, out); }

status read_profiler(const config_node& node, benchmark_config& c) {
  field_reader r(node, "benchmark.profiler");
  if (const config_node* tp = r.get("torch_profiler")) {
    field_reader t(*tp, "benchmark.profiler.torch_profiler");
    MAGPIE_RETURN_IF_ERROR(t.read_bool("enabled", &c.profiler.torch_profiler));
    MAGPIE_RETURN_IF_ERROR(t.read_int("profile_prompts", &c.profiler.profile_prompts));
    MAGPIE_RETURN_IF_ERROR(t.read_double("trace_wait_s", &c.profiler.trace_wait_s));
    MAGPIE_RETURN_IF_ERROR(t.read_string("vllm_profiler_args", &c.profiler.vllm_profiler_args));
    for (const char* k : {"num_steps", "num_profiles", "interval_seconds", "start_seconds", "detailed_annotations"}) {
      if (t.get(k)) c.warnings.push_back(strprintf("benchmark.profiler.torch_profiler.%s is not used by magpie", k));
    }
    MAGPIE_RETURN_IF_ERROR(t.check_unknown());
  }
  if (const config_node* sp = r.get("system_profiler")) {
    field_reader s(*sp, "benchmark.profiler.system_profiler");
    bool on = false;
    MAGPIE_RETURN_IF_ERROR(s.read_bool("enabled", &on));
    s.allow("profile_args");
    MAGPIE_RETURN_IF_ERROR(s.check_unknown());
    if (on) return config_error(*sp, "benchmark.profiler.system_profiler.enabled", "the system profiler is not supported by magpie (use torch_profiler)");
  }
  if (const config_node* tl = r.get("tracelens")) {
    c.profiler.tracelens = tl->to_json();
    c.profiler.tracelens_enabled = json_bool(c.profiler.tracelens, "enabled", false);
  }
  for (const char* k : {"gpu_monitor", "targeted_trace"}) {
    if (const config_node* n = r.get(k); n && json_bool(n->to_json(), "enabled", false) && std::string(k) == "targeted_trace")
      return config_error(*n, std::string("benchmark.profiler.") + k, "targeted_trace is not supported by magpie benchmark");
  }
  return r.check_unknown();
}

status read_gpu_selection(const config_node& node, benchmark_config& c) {
  field_reader r(node, "benchmark.gpu_selection");
  MAGPIE_RETURN_IF_ERROR(r.read_bool("auto", &c.gpu_selection.auto_select));
  MAGPIE_RETURN_IF_ERROR(r.read_double("min_free_memory_gb", &c.gpu_selection.min_free_memory_gb));
  int64_t count = 0;
  MAGPIE_RETURN_IF_ERROR(r.read_int("count", &count));
  c.gpu_selection.count = static_cast<int>(count);
  if (const config_node* cand = r.get("candidates")) {
    if (!cand->is_sequence()) return config_error(*cand, r.field("candidates"), "expected a list of GPU indices");
    for (const auto& it : cand->items) {
      auto v = parse_int(it.text);
      if (!it.is_scalar() || !v) return config_error(it, r.field("candidates"), "expected integer GPU indices");
      c.gpu_selection.candidates.push_back(static_cast<int>(*v));
    }
  }
  return r.check_unknown();
}

status read_client(const config_node& node, client_settings& c) {
  field_reader r(node, "benchmark.client");
  MAGPIE_RETURN_IF_ERROR(r.read_string("endpoint", &c.endpoint));
  MAGPIE_RETURN_IF_ERROR(r.read_string("dataset_name", &c.dataset_name));
  MAGPIE_RETURN_IF_ERROR(r.read_string("dataset_path", &c.dataset_path));
  MAGPIE_RETURN_IF_ERROR(read_int_field(r, "num_prompts", &c.num_prompts));
  MAGPIE_RETURN_IF_ERROR(read_int_field(r, "max_concurrency", &c.max_concurrency));
  MAGPIE_RETURN_IF_ERROR(read_int_field(r, "random_input_len", &c.random_input_len));
  MAGPIE_RETURN_IF_ERROR(read_int_field(r, "random_output_len", &c.random_output_len));
  MAGPIE_RETURN_IF_ERROR(read_int_field(r, "vocab_size", &c.vocab_size));
  if (r.get("random_range_ratio")) {
    double v = 0;
    MAGPIE_RETURN_IF_ERROR(r.read_double("random_range_ratio", &v));
    c.random_range_ratio = v;
  }
  if (const config_node* rr = r.get("request_rate")) {
    if (to_lower(rr->text) == "inf") c.request_rate = 0;
    else MAGPIE_RETURN_IF_ERROR(r.read_double("request_rate", &c.request_rate));
  }
  MAGPIE_RETURN_IF_ERROR(r.read_double("burstiness", &c.burstiness));
  int64_t warm = c.num_warmups, seed = 0;
  MAGPIE_RETURN_IF_ERROR(r.read_int("num_warmups", &warm));
  MAGPIE_RETURN_IF_ERROR(r.read_int("seed", &seed));
  c.num_warmups = static_cast<int>(warm);
  c.seed = static_cast<uint64_t>(seed);
  MAGPIE_RETURN_IF_ERROR(r.read_bool("ignore_eos", &c.ignore_eos));
  MAGPIE_RETURN_IF_ERROR(r.read_bool("continuous_usage", &c.continuous_usage));
  MAGPIE_RETURN_IF_ERROR(r.read_string_list("goodput", &c.goodput));
  std::vector<std::string> pcts;
  MAGPIE_RETURN_IF_ERROR(r.read_string_list("percentiles", &pcts));
  if (!pcts.empty()) {
    c.percentiles.clear();
    for (const auto& p : pcts) {
      auto v = parse_double(p);
      if (!v || *v < 0 || *v > 100) return invalid_argument("benchmark.client.percentiles: '%s' is not in [0, 100]", p.c_str());
      c.percentiles.push_back(*v);
    }
  }
  MAGPIE_RETURN_IF_ERROR(r.read_double("request_timeout_s", &c.request_timeout_s));
  MAGPIE_RETURN_IF_ERROR(r.read_string("served_model_name", &c.served_model_name));
  MAGPIE_RETURN_IF_ERROR(r.read_string_list("headers", &c.headers));
  return r.check_unknown();
}

status read_server(const config_node& node, server_settings& s) {
  field_reader r(node, "benchmark.server");
  int64_t port = 0;
  MAGPIE_RETURN_IF_ERROR(r.read_int("port", &port));
  s.port = static_cast<int>(port);
  MAGPIE_RETURN_IF_ERROR(r.read_double("ready_timeout_s", &s.ready_timeout_s));
  MAGPIE_RETURN_IF_ERROR(r.read_double("stop_grace_s", &s.stop_grace_s));
  MAGPIE_RETURN_IF_ERROR(r.read_string_list("extra_args", &s.extra_args));
  argv_list cmd;
  MAGPIE_RETURN_IF_ERROR(r.read_command("command", &cmd));
  if (cmd.size() > 1) return invalid_argument("benchmark.server.command: one command expected");
  if (!cmd.empty()) s.command = cmd[0];
  return r.check_unknown();
}

status read_benchmark(const config_node& b, benchmark_config& c) {
  field_reader r(b, "benchmark");
  MAGPIE_RETURN_IF_ERROR(r.read_string("framework", &c.framework));
  MAGPIE_RETURN_IF_ERROR(r.read_string("model", &c.model));
  MAGPIE_RETURN_IF_ERROR(r.read_string("precision", &c.precision));
  MAGPIE_RETURN_IF_ERROR(r.read_string("run_mode", &c.run_mode));
  MAGPIE_RETURN_IF_ERROR(r.read_string("run_kind", &c.run_kind));
  env_list envs;
  MAGPIE_RETURN_IF_ERROR(r.read_string_map("envs", &envs));
  for (auto& [k, v] : envs) {
    std::string up = k;
    std::transform(up.begin(), up.end(), up.begin(), [](unsigned char ch) { return std::toupper(ch); });
    c.set_env(up, v);
  }
  if (const config_node* p = r.get("profiler")) MAGPIE_RETURN_IF_ERROR(read_profiler(*p, c));
  if (const config_node* g = r.get("gap_analysis")) {
    c.gap_analysis = g->to_json();
    c.gap_analysis_enabled = json_bool(c.gap_analysis, "enabled", false);
  }
  if (const config_node* g = r.get("gpu_selection")) MAGPIE_RETURN_IF_ERROR(read_gpu_selection(*g, c));
  MAGPIE_RETURN_IF_ERROR(r.read_string("docker_image", &c.docker_image));
  MAGPIE_RETURN_IF_ERROR(r.read_string("gpu_arch", &c.gpu_arch));
  MAGPIE_RETURN_IF_ERROR(r.read_string("hf_cache_path", &c.hf_cache_path));
  MAGPIE_RETURN_IF_ERROR(r.read_string("model_revision", &c.model_revision));
  MAGPIE_RETURN_IF_ERROR(r.read_double("timeout_seconds", &c.timeout_seconds));
  MAGPIE_RETURN_IF_ERROR(r.read_string("base_url", &c.base_url));
  if (const config_node* n = r.get("client")) MAGPIE_RETURN_IF_ERROR(read_client(*n, c.client));
  if (const config_node* n = r.get("server")) MAGPIE_RETURN_IF_ERROR(read_server(*n, c.server));
  for (const char* k : k_ignored_keys)
    if (r.get(k)) c.warnings.push_back(strprintf("benchmark.%s is a Magpie/InferenceX setting magpie does not use (ignored)", k));
  return r.check_unknown();
}

}  // namespace

status_or<benchmark_config> parse_benchmark_yaml(const std::string& text, const std::string& file_name) {
  MAGPIE_ASSIGN_OR_RETURN(config_node root, parse_yaml(text, file_name));
  const config_node* b = root.get("benchmark");
  if (!b || !b->is_map() || b->entries.empty())
    return invalid_argument("%s: the benchmark config needs a non-empty top-level 'benchmark:' mapping", file_name.c_str());
  benchmark_config c;
  c.framework = "sglang";  // Magpie's from_dict default
  c.config_path = file_name;
  c.input_config_sha256 = sha256_hex(text);
  MAGPIE_RETURN_IF_ERROR(read_benchmark(*b, c));
  if (c.envs.empty()) c.envs = default_envs();
  if (c.model_revision.empty()) c.model_revision = c.env("MODEL_REVISION");
  if (c.base_url.empty()) c.base_url = c.env("BENCHMARK_BASE_URL");
  return c;
}

status_or<benchmark_config> load_benchmark_config(const fs::path& path) {
  MAGPIE_ASSIGN_OR_RETURN(std::string text, read_input_file(path, yaml_limits{}.max_bytes, "benchmark config"));
  return parse_benchmark_yaml(text, path.string());
}

status validate_config(const benchmark_config& c) {
  if (c.base_url.empty()) {
    if (c.framework != "vllm" && c.framework != "sglang" && c.framework != "atom")
      return invalid_argument("framework '%s' is not supported (vllm, sglang, atom; xdit is not)", c.framework.c_str());
    if (c.model.empty() && c.server.command.empty()) return invalid_argument("a model is required (-m/--model or benchmark.model)");
    if (c.run_mode != "local" && c.run_mode != "docker")
      return invalid_argument("run_mode '%s' is not supported (local, docker)", c.run_mode.c_str());
  }
  if (c.run_kind != "auto" && c.run_kind != "measurement" && c.run_kind != "diagnostic")
    return invalid_argument("run_kind '%s' must be auto, measurement or diagnostic", c.run_kind.c_str());
  if (c.run_kind == "measurement" && c.profiling_requested())
    return invalid_argument("run_kind measurement cannot enable the torch profiler, tracelens or gap analysis (they perturb the measurement); use diagnostic or auto");
  if (c.tp() < 1) return invalid_argument("TP must be >= 1");
  if (c.env_int("CONC", 32) < 1) return invalid_argument("CONC (--concurrency) must be >= 1");
  if (c.timeout_seconds <= 0) return invalid_argument("timeout_seconds must be > 0");
  if (c.client.burstiness <= 0) return invalid_argument("burstiness must be > 0");
  if (c.profiler.vllm_profiler_args != "auto" && c.profiler.vllm_profiler_args != "flags" && c.profiler.vllm_profiler_args != "env")
    return invalid_argument("profiler.torch_profiler.vllm_profiler_args must be auto, flags or env");
  return ok_status();
}

}  // namespace magpie::serve
