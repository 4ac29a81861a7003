// Serving-benchmark tools: benchmark (run handle), benchmark_status, benchmark_cancel,
// list_benchmark_images.
#include <cctype>
#include <set>

#include "core/states.h"
#include "core/strings.h"
#include "core/workspace.h"
#include "core/yaml.h"
#include "mcp/run_registry.h"
#include "core/json_schema.h"
#include "mcp/tool_util.h"
#include "mcp/tools_bench.h"
#include "serve/bench_config.h"
#include "serve/metrics_schema.h"
#include "trace/report_schema.h"

namespace magpie::mcp {

using namespace magpie::schema;  // the one schema library (core/json_schema.h)
namespace {

/// Inputs of the benchmark tool (Magpie's argument names) — also each benchmark_batch config.
const json& benchmark_input_schema() {
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

json warnings_schema() { return s_array(s_string("warning"), "Magpie arguments accepted but not acted on"); }

/// True when the argument is given and not null (Magpie's None).
bool given(const json& a, const char* k) { return a.contains(k) && !a[k].is_null(); }

/// Magpie's benchmark: YAML from tool arguments (research magpie.md §6.1, §10 tool 8). Magpie
/// arguments magpie does not act on are reported in `warnings`.
json benchmark_yaml(const json& a, json* warnings) {
  int tp = static_cast<int>(arg_num(a, "tp", 1));
  json envs = {{"TP", tp},
               {"CONC", static_cast<int>(arg_num(a, "concurrency", 32))},
               {"ISL", static_cast<int>(arg_num(a, "input_len", 1024))},
               {"OSL", static_cast<int>(arg_num(a, "output_len", 512))},
               {"RANDOM_RANGE_RATIO", 0.5}};
  if (a.contains("extra_envs") && a["extra_envs"].is_object())
    for (auto it = a["extra_envs"].begin(); it != a["extra_envs"].end(); ++it) {
      std::string key = it.key();
      for (auto& c : key) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));  // Magpie upper-cases
      envs[key] = it.value();
    }
  json torch = {{"enabled", arg_bool(a, "torch_profiler", true)}};  // Magpie's MCP default: on
  for (auto [arg, key] : {std::pair{"torch_profiler_steps", "num_steps"}, {"torch_profiler_count", "num_profiles"},
                          {"torch_profiler_interval_seconds", "interval_seconds"},
                          {"torch_profiler_start_seconds", "start_seconds"},
                          {"torch_profiler_detailed_annotations", "detailed_annotations"}})
    if (given(a, arg)) torch[key] = a[arg];
  json profiler = {{"torch_profiler", torch}, {"system_profiler", {{"enabled", arg_bool(a, "system_profiler", false)}}}};
  if (given(a, "tracelens"))
    profiler["tracelens"] = {{"enabled", arg_bool(a, "tracelens", false)},
                             {"export_format", arg_str(a, "tracelens_export_format", "csv")},
                             {"multi_rank_report_enabled", tp > 1}};
  json b = {{"framework", arg_str(a, "framework")},
            {"model", arg_str(a, "model")},
            {"precision", arg_str(a, "precision", "fp8")},
            {"run_mode", arg_str(a, "run_mode", "docker")},
            {"envs", envs},
            {"profiler", profiler},
            {"timeout_seconds", arg_num(a, "timeout_seconds", 3600)}};
  for (const char* k : {"docker_image", "gpu_arch", "inferencex_path", "benchmark_script", "runner_type", "hf_cache_path"})
    if (!arg_str(a, k).empty()) b[k] = arg_str(a, k);
  if (arg_bool(a, "gap_analysis_enabled", false)) {
    json g = {{"enabled", true},
              {"top_k", static_cast<int>(arg_num(a, "gap_analysis_top_k", 20))},
              {"trace_start_pct", arg_num(a, "gap_analysis_start_pct", 0)},
              {"trace_end_pct", arg_num(a, "gap_analysis_end_pct", 100)},
              {"min_duration_us", arg_num(a, "gap_analysis_min_duration_us", 0)}};
    if (given(a, "gap_analysis_categories")) g["categories"] = a["gap_analysis_categories"];
    if (given(a, "gap_analysis_ignore_categories")) g["ignore_categories"] = a["gap_analysis_ignore_categories"];
    b["gap_analysis"] = g;
  }
  // run_mode ray: one Ray job (src/cli/benchmark_ray.cpp) configured from Magpie's ray_* arguments.
  static const std::pair<const char*, const char*> k_ray[] = {
      {"ray_cluster_address", "cluster_address"}, {"ray_shared_storage_path", "shared_storage_path"},
      {"ray_num_gpus", "entrypoint_num_gpus"}, {"ray_multi_node", "multi_node"},
      {"ray_total_num_gpus", "total_num_gpus"}, {"ray_num_nodes", "num_nodes"}};
  bool ray = arg_str(a, "run_mode") == "ray";
  json ray_config = json::object();
  for (const auto& [arg, key] : k_ray) {
    if (ray && arg_set(a, arg)) ray_config[key] = a[arg];
    else if (arg_set(a, arg))
      warnings->push_back(std::string(arg) + " is used only with run_mode: ray (docs/ray.md); ignored for this run");
  }
  if (ray && !ray_config.empty()) b["ray_config"] = ray_config;
  if (arg_set(a, "agentx_mode")) warnings->push_back("agentx_mode is accepted but not used (AgentX is not provided)");
  if (a.contains("benchmark_config") && a["benchmark_config"].is_object())
    for (auto it = a["benchmark_config"].begin(); it != a["benchmark_config"].end(); ++it) b[it.key()] = it.value();
  return {{"benchmark", b}};
}

/// benchmark_* workspaces in `out_dir` now (those a later run did not make).
std::set<std::string> benchmark_dirs(const fs::path& out_dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out_dir, ec))
    if (starts_with(e.path().filename().string(), "benchmark_")) names.insert(e.path().filename().string());
  return names;
}

/// The trust model (policy.h) on the benchmark YAML the tool generated (benchmark_config merged
/// in): a server command is a client-chosen program; server args, nsys args, a docker image and
/// code-loading environment variables need --trust-client; paths stay in the workspace root.
status check_benchmark_config(const json& doc, const trust_policy& p) {
  auto cfg = serve::parse_benchmark_yaml(json_to_yaml(doc), "benchmark tool arguments");
  if (!cfg.ok()) return ok_status();  // the CLI refuses the same document: nothing runs
  const std::string at = "benchmark_config.";
  MAGPIE_RETURN_IF_ERROR(check_command(p, at + "server.command", cfg->server.command, {}));
  if (!cfg->server.extra_args.empty())
    MAGPIE_RETURN_IF_ERROR(require_trust(p, at + "server.extra_args", "arguments for the server program"));
  if (!cfg->profiler.system_profile_args.empty())
    MAGPIE_RETURN_IF_ERROR(require_trust(p, at + "profiler.system_profiler.args", "arguments for nsys"));
  if (!cfg->docker_image.empty())
    MAGPIE_RETURN_IF_ERROR(require_trust(p, "docker_image", "a client-chosen container image (its entrypoint runs)"));
  for (const auto& [key, value] : cfg->envs)
    if (env_needs_trust(key))
      MAGPIE_RETURN_IF_ERROR(require_trust(p, "envs." + key, "an environment variable that loads code or picks programs or their arguments"));
  for (auto [field, value] : {std::pair<const char*, std::string>{"client.dataset_path", cfg->client.dataset_path},
                              {"server_lifecycle.pid_dir", cfg->lifecycle.pid_dir}})
    if (!value.empty()) MAGPIE_RETURN_IF_ERROR(confine_path(p, at + field, value).get_status());
  if (cfg->hf_cache_path != serve::benchmark_config().hf_cache_path)
    MAGPIE_RETURN_IF_ERROR(confine_path(p, "hf_cache_path", cfg->hf_cache_path).get_status());
  return ok_status();
}

}  // namespace

json benchmark_result_props() {
  return {{"workspace", s_string("benchmark workspace")},
          {"success", s_boolean("the run succeeded")},
          {"framework", s_string("framework")},
          {"model", s_string("model")},
          {"throughput", or_null(serve::magpie_throughput_schema())},
          {"latency", or_null(serve::magpie_latency_schema())},
          {"top_bottlenecks", s_array(s_string("kernel"), "kernels with the most GPU time (trace)")},
          {"errors", s_array(s_string("error"), "errors")},
          {"warnings", s_array(s_string("warning"), "warnings")},
          {"execution_time", s_number("wall time, s")},
          {"gap_analysis", trace::gap_analysis_schema()},
          {"run_kind", s_enum("measurement or diagnostic", {"measurement", "diagnostic"})},
          {"reward_eligible", s_boolean("a successful measurement run")},
          {"summary_text", s_string("the CLI's summary.txt")}};
}

json finished_benchmark(const fs::path& out_dir, const std::set<std::string>& before, const run_result& r,
                        std::string* err) {
  fs::path ws;
  for (const auto& l : split(r.out, '\n'))
    if (starts_with(trim(l), "Workspace:")) ws = std::string(trim(std::string_view(l).substr(l.find(':') + 1)));
  std::error_code ec;
  if (ws.empty()) {  // newest benchmark_* made during this run
    for (const auto& e : fs::directory_iterator(out_dir, ec)) {
      std::string n = e.path().filename().string();
      if (starts_with(n, "benchmark_") && !before.count(n) && fs::exists(e.path() / "benchmark_report.json", ec) &&
          (ws.empty() || n > ws.filename().string()))
        ws = e.path();
    }
  }
  auto rep = ws.empty() ? status_or<json>(not_found("no workspace")) : read_json_file(ws / "benchmark_report.json");
  if (!rep.ok()) {
    *err = "benchmark wrote no benchmark_report.json (" + r.describe() + "): " + r.output_tail(1500);
    return nullptr;
  }
  if (!json_bool(*rep, "success", false)) *err = "benchmark reported success=false";
  else if (!r.success()) *err = "magpie benchmark " + r.describe() + ": " + r.output_tail(1500);
  json res = {{"workspace", ws.string()}};
  for (const char* k : {"success", "framework", "model", "throughput", "latency", "top_bottlenecks", "errors", "warnings",
                        "execution_time", "gap_analysis", "run_kind", "reward_eligible"})
    if (rep->contains(k)) res[k] = (*rep)[k];
  auto summary = read_file(ws / "summary.txt");
  if (summary.ok()) res["summary_text"] = *summary;
  return res;
}

namespace {

/// Writes the YAML for `a` and starts `magpie benchmark` in the background (after run `after`
/// when given). Returns {run_id, config_file, output_dir}.
/// The arguments of one benchmark run that are not part of its YAML (benchmark_yaml translates
/// those), decoded once.
struct benchmark_run_args {
  bool agentx = false;
  std::string output_dir, framework, model;
  std::vector<std::string> extra_args;  ///< appended to the `magpie benchmark` command line
  double timeout_s = 3600;              ///< the YAML's timeout_seconds
  static benchmark_run_args decode(const json& a) {
    return {arg_bool(a, "agentx", false), arg_str(a, "output_dir"), arg_str(a, "framework"), arg_str(a, "model"),
            arg_strings(a, "extra_args"), arg_num(a, "timeout_seconds", 3600)};
  }
};

status_or<json> start_benchmark_run(const json& a, tool_context& ctx, const std::string& after, json* warnings) {
  const benchmark_run_args args = benchmark_run_args::decode(a);
  if (args.agentx)
    return invalid_argument("agentx: AgentX recipes (InferenceX agentic-coding workloads) are not provided by magpie");
  MAGPIE_ASSIGN_OR_RETURN(fs::path out, output_dir_path(args.output_dir, ctx));
  json doc = benchmark_yaml(a, warnings);
  MAGPIE_RETURN_IF_ERROR(check_benchmark_config(doc, ctx.settings().policy));
  MAGPIE_ASSIGN_OR_RETURN(fs::path cfg, write_request_file(out, "benchmark", "yaml", json_to_yaml(doc)));
  spawn_spec spec;
  spec.argv = {ctx.settings().self_exe.string(), "benchmark", "--benchmark-config", cfg.string(), "--output-dir", out.string()};
  for (const auto& x : args.extra_args) spec.argv.push_back(x);
  spec.env.emplace_back("MAGPIE_NO_PROGRESS", "1");
  finish_fn finish = [out, before = benchmark_dirs(out)](const run_result& r, std::string* err) {
    return finished_benchmark(out, before, r, err);
  };
  json info = {{"framework", args.framework}, {"model", args.model},
               {"config_file", cfg.string()}, {"output_dir", out.string()}};
  // The child's own timeout is in the YAML; ours adds a grace period for startup/teardown.
  MAGPIE_ASSIGN_OR_RETURN(std::string id, ctx.runs().start("benchmark", spec, args.timeout_s + 300,
                                                          info, finish, after));
  return json{{"run_id", id}, {"config_file", cfg.string()}, {"output_dir", out.string()}};
}

tool_result benchmark_tool(const json& a, tool_context& ctx) {
  json warnings = json::array();
  auto started = start_benchmark_run(a, ctx, "", &warnings);
  if (!started.ok()) return tool_result::error("benchmark could not start: " + started.get_status().message());
  json r = *started;
  r["state"] = "running";
  r["poll"] = "call benchmark_status with this run_id; benchmark_cancel stops it";
  r["warnings"] = warnings;
  return tool_result::ok("benchmark started: " + json_string(r, "run_id"), r);
}

/// benchmark_batch's arguments, decoded once. Each config is a benchmark tool's arguments
/// (validated against its input schema and decoded by start_benchmark_run, one by one).
struct batch_args {
  bool parallel = false;
  std::vector<std::string> unused_ray;  ///< Magpie's batch-level ray_* arguments given (not used here)
  json configs = json::array();
  std::optional<json> output_dir;       ///< the batch's output_dir, for configs without their own
  static batch_args decode(const json& a) {
    batch_args r;
    r.parallel = arg_bool(a, "parallel", false);
    for (const char* k : {"ray_cluster_address", "ray_shared_storage_path"})
      if (arg_set(a, k)) r.unused_ray.emplace_back(k);
    r.configs = json_value(a, "configs");
    if (a.contains("output_dir")) r.output_dir = a["output_dir"];
    return r;
  }
};

tool_result batch_tool(const json& arguments, tool_context& ctx) {
  const batch_args a = batch_args::decode(arguments);
  const bool parallel = a.parallel;
  json jobs = json::array(), warnings = json::array();
  for (const auto& k : a.unused_ray)
    warnings.push_back(k + " is accepted but not used here: give run_mode: ray and the ray_* arguments in "
                           "each config to send it to Ray");
  size_t submitted = 0, failed = 0;
  std::string previous;
  const json& configs = a.configs;
  for (size_t i = 0; i < configs.size(); ++i) {  // the trust model refuses the batch as a whole
    json w = json::array();
    status st = check_benchmark_config(benchmark_yaml(configs[i], &w), ctx.settings().policy);
    if (st.code() == status_code::permission_denied)
      return tool_result::error(strprintf("benchmark_batch refused: configs[%zu]: %s", i, st.message().c_str()));
  }
  for (size_t i = 0; i < configs.size(); ++i) {
    json cfg = configs[i];
    if (!cfg.contains("output_dir") && a.output_dir) cfg["output_dir"] = *a.output_dir;
    json job = {{"index", i}, {"framework", json_string(cfg, "framework")}, {"model", json_string(cfg, "model")}};
    std::string problem = validate(benchmark_input_schema(), cfg);
    json w = json::array();
    auto started = problem.empty() ? start_benchmark_run(cfg, ctx, parallel ? "" : previous, &w)
                                   : status_or<json>(invalid_argument("%s", problem.c_str()));
    if (!started.ok()) {
      job["status"] = task_status_name(task_status::failed);
      job["error"] = started.get_status().message();
      ++failed;
    } else {
      std::string id = json_string(*started, "run_id");
      job["task_id"] = id;
      job["run_id"] = id;
      job["config_file"] = (*started)["config_file"];
      job["status"] = task_status_name(parallel || previous.empty() ? task_status::submitted : task_status::pending);
      previous = id;
      ++submitted;
    }
    for (const auto& x : w) warnings.push_back(strprintf("configs[%zu]: ", i) + json_as_string(x).value_or(dump_compact(x)));
    jobs.push_back(std::move(job));
  }
  json out = {{"parallel", parallel}, {"submitted", submitted}, {"failed", failed}, {"jobs", jobs}, {"warnings", warnings}};
  return tool_result::ok(strprintf("%zu benchmark run(s) submitted%s, %zu failed", submitted,
                                   parallel ? " in parallel" : " (one after the other)", failed), out);
}

/// benchmark_status / benchmark_cancel: the run handle (nullopt: list every run) and how many
/// log lines to return.
struct run_handle_args {
  std::optional<std::string> run_id;
  size_t tail_lines = 20;
  static run_handle_args decode(const json& a) {
    return {a.contains("run_id") ? std::optional<std::string>(arg_str(a, "run_id")) : std::nullopt,
            static_cast<size_t>(arg_num(a, "tail_lines", 20))};
  }
};

tool_result status_tool(const json& a, tool_context& ctx) {
  const run_handle_args args = run_handle_args::decode(a);
  if (!args.run_id) return tool_result::ok("runs of this server", {{"runs", ctx.runs().list()}});
  const std::string& id = *args.run_id;
  auto s = ctx.runs().status(id, args.tail_lines);
  if (!s) return tool_result::error("unknown run_id '" + id + "'");
  return tool_result::ok(id + ": " + json_string(*s, "state"), *s);
}

tool_result cancel_tool(const json& a, tool_context& ctx) {
  const std::string id = run_handle_args::decode(a).run_id.value_or("");
  auto s = ctx.runs().status(id, 0);
  if (!s) return tool_result::error("unknown run_id '" + id + "'");
  bool ok = ctx.runs().cancel(id);
  return tool_result::ok(ok ? id + ": cancellation requested" : id + " is not running",
                         {{"run_id", id}, {"cancelled", ok}, {"state", json_string(*s, "state")}});
}

tool_result images_tool(const json& a, tool_context&) {
  // Magpie's benchmark_images.yaml (research magpie.md §6.6).
  static const json k_images = {
      {"vllm", {{"gfx942", "vllm/vllm-openai-rocm:v0.19.1"}, {"gfx950", "vllm/vllm-openai-rocm:v0.19.1"},
                {"sm_80", "vllm/vllm-openai:v0.19.1"}, {"sm_90", "vllm/vllm-openai:v0.19.1"},
                {"sm_100", "vllm/vllm-openai:v0.19.1"}}},
      {"sglang", {{"gfx942", "lmsysorg/sglang:v0.5.12-rocm720-mi30x"}, {"gfx950", "lmsysorg/sglang:v0.5.12-rocm720-mi35x"},
                  {"sm_80", "lmsysorg/sglang:v0.5.8-cu130-amd64-runtime"},
                  {"sm_90", "lmsysorg/sglang:v0.5.8-cu130-amd64-runtime"},
                  {"sm_100", "lmsysorg/sglang:v0.5.8-cu130-amd64-runtime"}}},
      {"atom", {{"gfx942", "rocm/atom:latest"}, {"gfx950", "rocm/atom:latest"}}}};
  const std::string fw = arg_str(a, "framework");  // the one argument: "" lists every framework
  json images = json::object(), details = json::object();
  for (auto it = k_images.begin(); it != k_images.end(); ++it) {
    if (!fw.empty() && it.key() != fw) continue;
    images[it.key()] = it.value();
    for (auto arch = it.value().begin(); arch != it.value().end(); ++arch)
      details[it.key()][arch.key()] = {{"image", arch.value()},
                                       {"runner_type", starts_with(arch.key(), "gfx") ? "amd" : "nvidia"}};
  }
  if (!fw.empty() && images.empty()) return tool_result::error("unknown framework '" + fw + "' (vllm, sglang, atom)");
  return tool_result::ok("benchmark images", {{"images", images}, {"details", details}});
}

json benchmark_status_schema() {
  json one = run_status_schema();
  json out = one;
  out["properties"]["runs"] = s_array(one, "every run of this server (without run_id)");
  out.erase("required");
  return out;
}

}  // namespace

void add_benchmark_tools(std::vector<tool_def>* out) {
  out->push_back({"benchmark", "Benchmark an inference server",
                  "Start a serving benchmark (vLLM, SGLang, ATOM or an OpenAI-compatible server) in the background and "
                  "return a run handle at once. Poll benchmark_status(run_id) (or ray_task_status(task_id)); "
                  "benchmark_cancel stops it. Magpie's arguments are accepted; those magpie does not act on are listed "
                  "in warnings.",
                  benchmark_input_schema(),
                  closed({{"run_id", s_string("handle")}, {"state", s_enum("state", {"running"})},
                          {"config_file", s_string("generated benchmark YAML")}, {"output_dir", s_string("results directory")},
                          {"poll", s_string("how to follow the run")}, {"warnings", warnings_schema()}},
                         {"run_id", "state", "config_file", "output_dir", "warnings"}),
                  false, benchmark_tool});
  json job = closed({{"index", s_integer("position in configs", 0)}, {"framework", s_string("framework")},
                     {"model", s_string("model")}, {"task_id", s_string("run handle (Magpie's name)")},
                     {"run_id", s_string("run handle")}, {"config_file", s_string("generated YAML")},
                     {"status", s_enum("SUBMITTED: started; PENDING: queued after the previous run; FAILED: refused",
                                       task_status_names({task_status::submitted, task_status::pending, task_status::failed}))},
                     {"error", s_string("why it was refused")}},
                    {"index", "framework", "model", "status"});
  out->push_back({"benchmark_batch", "Benchmark several configurations",
                  "Submit several benchmark configurations (each one the benchmark tool's arguments) as background "
                  "runs: one after the other (default) or all at once (parallel). Returns one run handle per config; "
                  "follow them with benchmark_status or ray_task_status.",
                  closed({{"configs", s_array(s_any_object("benchmark tool arguments"), "configurations", 1)},
                          {"parallel", with_default(s_boolean("start every run at once (else in order)"), false)},
                          {"output_dir", s_string("results directory for configs that name none")},
                          {"ray_cluster_address", s_string("Ray: accepted, not used (warning)")},
                          {"ray_shared_storage_path", s_string("Ray: accepted, not used (warning)")}},
                         {"configs"}),
                  closed({{"parallel", s_boolean("started at once")}, {"submitted", s_integer("runs started or queued", 0)},
                          {"failed", s_integer("configs refused", 0)}, {"jobs", s_array(job, "per config")},
                          {"warnings", warnings_schema()}},
                         {"parallel", "submitted", "failed", "jobs", "warnings"}),
                  false, batch_tool});
  json status_out = benchmark_status_schema();
  out->push_back({"benchmark_status", "Benchmark run status",
                  "State of a background run (queued, running, succeeded, failed, cancelled, timed_out), elapsed time, "
                  "the last log lines and, when finished, the result. Without run_id: every run of this server.",
                  closed({{"run_id", s_string("handle from benchmark")},
                          {"tail_lines", with_default(s_integer("log lines returned", 0), 20)}},
                         {}),
                  status_out, true, status_tool});
  out->push_back({"benchmark_cancel", "Cancel a benchmark run",
                  "Stop a running or queued background run (its process group is terminated).",
                  closed({{"run_id", s_string("handle from benchmark")}}, {"run_id"}),
                  closed({{"run_id", s_string("handle")}, {"cancelled", s_boolean("requested")},
                          {"state", s_string("state when the request was made")}},
                         {"run_id", "cancelled", "state"}),
                  false, cancel_tool});
  json by_arch = {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}, {"description", "arch → image"}};
  json details = {{"type", "object"},
                  {"additionalProperties",
                   {{"type", "object"},
                    {"additionalProperties", closed({{"image", s_string("image")}, {"runner_type", s_string("amd | nvidia")}},
                                                    {"image", "runner_type"})}}},
                  {"description", "framework → arch → {image, runner_type}"}};
  out->push_back({"list_benchmark_images", "List benchmark images",
                  "Container images per framework and GPU architecture (Magpie's benchmark_images.yaml).",
                  closed({{"framework", or_null(s_string("vllm, sglang or atom (default: all)"))}}, {}),
                  closed({{"images", {{"type", "object"}, {"additionalProperties", by_arch}, {"description", "framework → arch → image"}}},
                          {"details", details}},
                         {"images", "details"}),
                  true, images_tool});
}

}  // namespace magpie::mcp
