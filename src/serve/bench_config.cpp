#include "serve/bench_config.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "core/json_schema.h"
#include "core/strings.h"
#include "core/yaml_json.h"
#include "serve/bench_config_codec.h"
#include "serve/bench_config_fields.h"
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
  return profiler.torch_profiler || profiler.tracelens_enabled || gap_analysis_enabled || profiler.system_profiler;
}

run_kind benchmark_config::effective_run_kind() const {
  if (run_kind != serve::run_kind::automatic) return run_kind;
  return profiling_requested() ? serve::run_kind::diagnostic : serve::run_kind::measurement;
}

std::string benchmark_config::framework_name() const { return framework ? serving_framework_name(*framework) : ""; }

env_list default_envs() {
  return {{"TP", "1"}, {"CONC", "32"}, {"ISL", "1024"}, {"OSL", "512"}, {"RANDOM_RANGE_RATIO", "0.5"}};
}

json benchmark_config_schema() {
  using namespace schema;
  const json scalar = {{"type", {"string", "number", "integer", "boolean", "null"}}};
  json as_given = {{"type", "object"},
                   {"additionalProperties", {{"type", {"string", "number", "integer", "boolean", "null", "array", "object"}},
                                             {"items", scalar},
                                             {"additionalProperties", scalar}}},
                   {"description", "the block as the config gave it"}};
  json strings = list_of(typed("string", "word"), "words");
  json nullable_ints = typed_or_null("array", "GPU indices (null: any)");
  nullable_ints["items"] = typed("integer", "index");
  json request_rate = {{"type", {"number", "string"}}, {"description", "requests/s, or \"inf\""}};
  auto or_auto = [](const char* unit) {
    return json{{"type", {"number", "string"}}, {"description", std::string(unit) + ", or \"auto\" (derived from the workload)"}};
  };
  return closed(
      {{"framework", typed("string", "vllm | sglang | atom")},
       {"model", typed("string", "model")},
       {"precision", typed("string", "precision")},
       {"run_mode", typed("string", "docker | local | ray")},
       {"run_kind", typed("string", "auto | measurement | diagnostic")},
       {"envs", {{"type", "object"}, {"additionalProperties", typed("string", "value")}, {"description", "Magpie's envs"}}},
       {"profiler", closed({{"torch_profiler", closed({{"enabled", typed("boolean", "on")},
                                                       {"profile_prompts", typed("integer", "separate pass size")},
                                                       {"trace_wait_s", typed("number", "s")},
                                                       {"vllm_profiler_args", typed("string", "auto | flags | env")}})},
                            {"system_profiler", closed({{"enabled", typed("boolean", "on")},
                                                        {"profile_args", strings}})},
                            {"tracelens", as_given}})},
       {"server_lifecycle", closed({{"enabled", typed("boolean", "on")}, {"cleanup", typed("boolean", "stop at the end")},
                                    {"force_reuse", typed("boolean", "reuse whatever answers")},
                                    {"pid_dir", typed_or_null("string", "state files")},
                                    {"server_ready_timeout_s", typed("number", "s")}})},
       {"gap_analysis", as_given},
       {"gpu_selection", closed({{"auto", typed("boolean", "pick idle GPUs")},
                                 {"min_free_memory_gb", typed("number", "GB")},
                                 {"count", typed_or_null("integer", "GPUs (null: TP)")},
                                 {"candidates", nullable_ints}})},
       {"docker_image", typed_or_null("string", "image")},
       {"gpu_arch", typed_or_null("string", "arch")},
       {"hf_cache_path", typed("string", "Hugging Face cache")},
       {"timeout_seconds", typed("number", "s")},
       {"client", closed({{"endpoint", typed("string", "API path")}, {"dataset_name", typed("string", "dataset")},
                          {"dataset_path", typed("string", "dataset file")}, {"num_prompts", typed("integer", "-1: envs")},
                          {"max_concurrency", typed("integer", "-1: envs")},
                          {"random_input_len", typed("integer", "-1: envs")},
                          {"random_output_len", typed("integer", "-1: envs")},
                          {"random_range_ratio", typed_or_null("number", "vLLM semantics (null: Magpie's)")},
                          {"request_rate", request_rate}, {"burstiness", typed("number", "gamma shape")},
                          {"num_warmups", typed("integer", "warm-up requests")}, {"seed", typed("integer", "seed")},
                          {"ignore_eos", typed("boolean", "ignore_eos")},
                          {"continuous_usage", typed("boolean", "usage in every chunk")},
                          {"goodput", list_of(typed("string", "metric:ms"), "goodput SLOs")},
                          {"percentiles", list_of(typed("number", "percentile"), "percentiles")},
                          {"request_timeout_s", or_auto("s (0: none)")},
                          {"max_event_bytes", or_auto("bytes per SSE line or event (0: none)")},
                          {"max_response_bytes", or_auto("bytes per response (0: none)")},
                          {"keep_generated_text", typed("boolean", "keep every request's text")},
                          {"served_model_name", typed("string", "request model")}})},
       {"server", closed({{"port", typed("integer", "port (0: auto)")}, {"ready_timeout_s", typed("number", "s")},
                          {"stop_grace_s", typed("number", "s")}, {"extra_args", strings}, {"command", strings}})},
       {"base_url", typed("string", "an already running server")}},
      {"framework", "model", "precision", "run_mode", "envs", "profiler", "client", "server"});
}

json benchmark_config_json(const benchmark_config& b) {
  json j;
  j["framework"] = b.framework_name();
  j["model"] = b.model;
  j["precision"] = b.precision;
  j["run_mode"] = b.run_mode;
  j["run_kind"] = b.run_kind;
  json e = json::object();
  for (const auto& [k, v] : b.envs) e[k] = v;
  j["envs"] = e;
  j["profiler"] = {{"torch_profiler", {{"enabled", b.profiler.torch_profiler}, {"profile_prompts", b.profiler.profile_prompts},
                                       {"trace_wait_s", b.profiler.trace_wait_s}, {"vllm_profiler_args", b.profiler.vllm_profiler_args}}},
                   {"system_profiler", {{"enabled", b.profiler.system_profiler}, {"profile_args", b.profiler.system_profile_args}}},
                   {"tracelens", b.profiler.tracelens}};
  if (b.lifecycle.enabled)
    j["server_lifecycle"] = {{"enabled", true}, {"cleanup", b.lifecycle.cleanup}, {"force_reuse", b.lifecycle.force_reuse},
                             {"pid_dir", b.lifecycle.pid_dir.empty() ? json(nullptr) : json(b.lifecycle.pid_dir)},
                             {"server_ready_timeout_s", b.lifecycle.server_ready_timeout_s}};
  j["gap_analysis"] = b.gap_analysis;
  j["gpu_selection"] = {{"auto", b.gpu_selection.auto_select}, {"min_free_memory_gb", b.gpu_selection.min_free_memory_gb},
                        {"count", b.gpu_selection.count ? json(b.gpu_selection.count) : json(nullptr)},
                        {"candidates", b.gpu_selection.candidates.empty() ? json(nullptr) : json(b.gpu_selection.candidates)}};
  j["docker_image"] = b.docker_image.empty() ? json(nullptr) : json(b.docker_image);
  j["gpu_arch"] = b.gpu_arch.empty() ? json(nullptr) : json(b.gpu_arch);
  j["hf_cache_path"] = b.hf_cache_path;
  j["timeout_seconds"] = b.timeout_seconds;
  const client_settings& c = b.client;
  j["client"] = {{"endpoint", c.endpoint}, {"dataset_name", c.dataset_name}, {"dataset_path", c.dataset_path},
                 {"num_prompts", c.num_prompts}, {"max_concurrency", c.max_concurrency},
                 {"random_input_len", c.random_input_len}, {"random_output_len", c.random_output_len},
                 {"random_range_ratio", c.random_range_ratio ? json(*c.random_range_ratio) : json(nullptr)},
                 {"request_rate", c.request_rate > 0 ? json(c.request_rate) : json("inf")}, {"burstiness", c.burstiness},
                 {"num_warmups", c.num_warmups}, {"seed", c.seed}, {"ignore_eos", c.ignore_eos},
                 {"continuous_usage", c.continuous_usage}, {"goodput", c.goodput}, {"percentiles", c.percentiles},
                 {"request_timeout_s", c.request_timeout_s < 0 ? json("auto") : json(c.request_timeout_s)},
                 {"max_event_bytes", c.max_event_bytes < 0 ? json("auto") : json(c.max_event_bytes)},
                 {"max_response_bytes", c.max_response_bytes < 0 ? json("auto") : json(c.max_response_bytes)},
                 {"keep_generated_text", c.keep_generated_text}, {"served_model_name", c.served_model_name}};
  j["server"] = {{"port", b.server.port}, {"ready_timeout_s", b.server.ready_timeout_s}, {"stop_grace_s", b.server.stop_grace_s}, {"extra_args", b.server.extra_args},
                 {"command", b.server.command}};
  if (!b.base_url.empty()) j["base_url"] = b.base_url;
  return j;
}

namespace {

// Magpie keys that configure parts magpie does differently (InferenceX scripts, Ray, server
// reuse, lm-eval, AgentX): accepted so existing files load, reported as ignored.
const char* const k_ignored_keys[] = {"inferencex_path", "inferencemax_path", "benchmark_script", "runner_type",
                                      "ray_config", "run_cmd", "lm_eval_runtime", "agentx", "image_config",
                                      "sweep_matrix"};

using detail::read_double_in;
using detail::read_int_in;
constexpr double k_huge = 1e300;
constexpr int64_t k_big = 1000000000;

status read_profiler(const config_node& node, benchmark_config& c) {
  field_reader r(node, "benchmark.profiler");
  if (const config_node* tp = r.get("torch_profiler")) {
    field_reader t(*tp, "benchmark.profiler.torch_profiler");
    MAGPIE_RETURN_IF_ERROR(t.read_bool("enabled", &c.profiler.torch_profiler));
    MAGPIE_RETURN_IF_ERROR(read_int_in(t, "profile_prompts", 0, k_big, &c.profiler.profile_prompts));
    MAGPIE_RETURN_IF_ERROR(read_double_in(t, "trace_wait_s", 0, k_huge, false, &c.profiler.trace_wait_s));
    if (const config_node* n = t.get("vllm_profiler_args")) {  // the plan's "none" is not a config word
      auto d = n->is_scalar() ? parse_profiler_delivery(n->text) : std::nullopt;
      if (!d || *d == profiler_delivery::none)
        return config_error(*n, t.field("vllm_profiler_args"), "'" + n->text + "' is not one of auto, flags, env");
      c.profiler.vllm_profiler_args = *d;
    }
    MAGPIE_RETURN_IF_ERROR(detail::read_agentx_profile_keys(t, c));
    MAGPIE_RETURN_IF_ERROR(t.check_unknown());
  }
  if (const config_node* sp = r.get("system_profiler")) {
    field_reader s(*sp, "benchmark.profiler.system_profiler");
    MAGPIE_RETURN_IF_ERROR(s.read_bool("enabled", &c.profiler.system_profiler));
    MAGPIE_RETURN_IF_ERROR(s.read_string_list("profile_args", &c.profiler.system_profile_args));
    MAGPIE_RETURN_IF_ERROR(s.check_unknown());
  }
  if (const config_node* tl = r.get("tracelens")) {
    MAGPIE_RETURN_IF_ERROR(detail::check_tracelens(*tl));
    c.profiler.tracelens = config_node_json(*tl);
    c.profiler.tracelens_enabled = json_bool(c.profiler.tracelens, "enabled", false);
  }
  for (const char* k : {"gpu_monitor", "targeted_trace"}) {
    if (const config_node* n = r.get(k); n && json_bool(config_node_json(*n), "enabled", false) && std::string(k) == "targeted_trace")
      return config_error(*n, std::string("benchmark.profiler.") + k, "targeted_trace during a benchmark is not provided; run `magpie targeted-trace adapt-torch` on the run's torch_trace/ instead");
  }
  return r.check_unknown();
}

status read_gpu_selection(const config_node& node, benchmark_config& c) {
  field_reader r(node, "benchmark.gpu_selection");
  MAGPIE_RETURN_IF_ERROR(r.read_bool("auto", &c.gpu_selection.auto_select));
  MAGPIE_RETURN_IF_ERROR(read_double_in(r, "min_free_memory_gb", 0, k_huge, false, &c.gpu_selection.min_free_memory_gb));
  int64_t count = 0;
  MAGPIE_RETURN_IF_ERROR(read_int_in(r, "count", 1, 4096, &count));
  c.gpu_selection.count = static_cast<int>(count);
  if (const config_node* cand = r.get("candidates")) {
    if (!cand->is_sequence()) return config_error(*cand, r.field("candidates"), "expected a list of GPU indices");
    for (const auto& it : cand->items) {
      auto v = parse_int(it.text);
      if (!it.is_scalar() || !v || *v < 0) return config_error(it, r.field("candidates"), "expected GPU indices (integers >= 0)");
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
  MAGPIE_RETURN_IF_ERROR(read_int_in(r, "num_prompts", 1, k_big, &c.num_prompts));
  MAGPIE_RETURN_IF_ERROR(read_int_in(r, "max_concurrency", 0, k_big, &c.max_concurrency));
  MAGPIE_RETURN_IF_ERROR(read_int_in(r, "random_input_len", 1, k_big, &c.random_input_len));
  MAGPIE_RETURN_IF_ERROR(read_int_in(r, "random_output_len", 1, k_big, &c.random_output_len));
  MAGPIE_RETURN_IF_ERROR(read_int_in(r, "vocab_size", 1, k_big, &c.vocab_size));
  if (const config_node* rr = r.get("random_range_ratio")) {
    double v = 0;
    MAGPIE_RETURN_IF_ERROR(read_double_in(r, "random_range_ratio", 0, 1, false, &v));
    if (v >= 1) return config_error(*rr, r.field("random_range_ratio"), "expected a number in [0, 1) (vLLM semantics), got " + rr->text);
    c.random_range_ratio = v;
  }
  if (const config_node* rr = r.get("request_rate")) {
    if (to_lower(rr->text) == "inf") c.request_rate = 0;
    else MAGPIE_RETURN_IF_ERROR(read_double_in(r, "request_rate", 0, k_huge, true, &c.request_rate));
  }
  MAGPIE_RETURN_IF_ERROR(read_double_in(r, "burstiness", 0, k_huge, true, &c.burstiness));
  int64_t warm = c.num_warmups, seed = 0;
  MAGPIE_RETURN_IF_ERROR(read_int_in(r, "num_warmups", 0, k_big, &warm));
  MAGPIE_RETURN_IF_ERROR(read_int_in(r, "seed", 0, std::numeric_limits<int64_t>::max(), &seed));
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
      if (!v || *v < 0 || *v > 100)
        return config_error(*r.get("percentiles"), r.field("percentiles"), "'" + p + "' is not in [0, 100]");
      c.percentiles.push_back(*v);
    }
  }
  auto is_auto = [&](const char* key) {
    const config_node* n = r.get(key);
    return n && (n->is_null() || (n->is_scalar() && !n->quoted && to_lower(n->text) == "auto"));
  };
  if (!is_auto("request_timeout_s")) MAGPIE_RETURN_IF_ERROR(read_double_in(r, "request_timeout_s", 0, k_huge, false, &c.request_timeout_s));
  if (!is_auto("max_event_bytes")) MAGPIE_RETURN_IF_ERROR(read_int_in(r, "max_event_bytes", 0, std::numeric_limits<int64_t>::max(), &c.max_event_bytes));
  if (!is_auto("max_response_bytes"))
    MAGPIE_RETURN_IF_ERROR(read_int_in(r, "max_response_bytes", 0, std::numeric_limits<int64_t>::max(), &c.max_response_bytes));
  MAGPIE_RETURN_IF_ERROR(r.read_bool("keep_generated_text", &c.keep_generated_text));
  MAGPIE_RETURN_IF_ERROR(r.read_string("served_model_name", &c.served_model_name));
  MAGPIE_RETURN_IF_ERROR(r.read_string_list("headers", &c.headers));
  return r.check_unknown();
}

status read_server(const config_node& node, server_settings& s) {
  field_reader r(node, "benchmark.server");
  int64_t port = 0;
  MAGPIE_RETURN_IF_ERROR(read_int_in(r, "port", 1, 65535, &port));
  s.port = static_cast<int>(port);
  MAGPIE_RETURN_IF_ERROR(read_double_in(r, "ready_timeout_s", 0, k_huge, true, &s.ready_timeout_s));
  MAGPIE_RETURN_IF_ERROR(read_double_in(r, "stop_grace_s", 0, k_huge, false, &s.stop_grace_s));
  MAGPIE_RETURN_IF_ERROR(r.read_string_list("extra_args", &s.extra_args));
  argv_list cmd;
  MAGPIE_RETURN_IF_ERROR(r.read_command("command", &cmd));
  if (cmd.size() > 1) return config_error(*r.get("command"), r.field("command"), "one command expected");
  if (!cmd.empty()) s.command = cmd[0];
  return r.check_unknown();
}

status read_benchmark(const config_node& b, benchmark_config& c) {
  field_reader r(b, "benchmark");
  std::string framework = c.framework_name(), run_mode = server_run_mode_name(c.run_mode), kind = run_kind_name(c.run_kind);
  MAGPIE_RETURN_IF_ERROR(r.read_string("framework", &framework));
  MAGPIE_RETURN_IF_ERROR(r.read_string("model", &c.model));
  MAGPIE_RETURN_IF_ERROR(r.read_string("precision", &c.precision));
  MAGPIE_RETURN_IF_ERROR(r.read_string("run_mode", &run_mode));
  MAGPIE_RETURN_IF_ERROR(r.read_string("run_kind", &kind));
  framework = to_lower(framework);  // upstream Magpie lower-cases both
  run_mode = to_lower(run_mode);
  if (const config_node* f = r.get("framework")) {
    auto fw = parse_serving_framework(framework);
    if (!fw)
      return config_error(*f, r.field("framework"), "'" + f->text + "' is not supported (vllm, sglang, atom" +
                          (framework == "xdit" ? "; xdit offline diffusion is not provided by magpie)" : ")"));
    c.framework = fw;
  }
  // ray: the run is submitted as a Ray job by src/cli/benchmark_ray.cpp, which runs it there with --run-mode local.
  if (const config_node* m = r.get("run_mode")) {
    auto mode = parse_server_run_mode(run_mode);
    if (!mode) return config_error(*m, r.field("run_mode"), "'" + m->text + "' is not one of docker, local, ray");
    c.run_mode = *mode;
  }
  if (const config_node* k = r.get("run_kind")) {
    auto rk = parse_run_kind(kind);
    if (!rk) return config_error(*k, r.field("run_kind"), "'" + k->text + "' is not one of auto, measurement, diagnostic");
    c.run_kind = *rk;
  }
  if (const config_node* e = r.get("envs")) MAGPIE_RETURN_IF_ERROR(detail::read_envs(*e, c));
  if (const config_node* l = r.get("server_lifecycle")) MAGPIE_RETURN_IF_ERROR(detail::read_lifecycle(*l, c.lifecycle));
  if (const config_node* p = r.get("profiler")) MAGPIE_RETURN_IF_ERROR(read_profiler(*p, c));
  if (const config_node* g = r.get("gap_analysis")) {
    MAGPIE_RETURN_IF_ERROR(detail::check_gap_analysis(*g));
    c.gap_analysis = config_node_json(*g);
    c.gap_analysis_enabled = json_bool(c.gap_analysis, "enabled", false);
  }
  if (const config_node* g = r.get("gpu_selection")) MAGPIE_RETURN_IF_ERROR(read_gpu_selection(*g, c));
  MAGPIE_RETURN_IF_ERROR(r.read_string("docker_image", &c.docker_image));
  MAGPIE_RETURN_IF_ERROR(r.read_string("gpu_arch", &c.gpu_arch));
  MAGPIE_RETURN_IF_ERROR(r.read_string("hf_cache_path", &c.hf_cache_path));
  MAGPIE_RETURN_IF_ERROR(r.read_string("model_revision", &c.model_revision));
  MAGPIE_RETURN_IF_ERROR(read_double_in(r, "timeout_seconds", 0, k_huge, true, &c.timeout_seconds));
  MAGPIE_RETURN_IF_ERROR(r.read_string("base_url", &c.base_url));
  if (const config_node* n = r.get("client")) MAGPIE_RETURN_IF_ERROR(read_client(*n, c.client));
  if (const config_node* n = r.get("server")) MAGPIE_RETURN_IF_ERROR(read_server(*n, c.server));
  for (const char* k : k_ignored_keys)
    if (r.get(k)) c.warnings.push_back(strprintf("benchmark.%s is a Magpie/InferenceX setting magpie does not use (ignored): "
                                                 "magpie launches the server and runs its own load generator", k));
  return r.check_unknown();
}

}  // namespace

status_or<benchmark_config> parse_benchmark_yaml(const std::string& text, const std::string& file_name) {
  MAGPIE_ASSIGN_OR_RETURN(config_node root, parse_yaml(text, file_name));
  const config_node* b = root.get("benchmark");
  if (!b || !b->is_map() || b->entries.empty())
    return invalid_argument("%s: the benchmark config needs a non-empty top-level 'benchmark:' mapping", file_name.c_str());
  benchmark_config c;
  c.framework = serving_framework::sglang;  // upstream Magpie's from_dict default
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

}  // namespace magpie::serve
