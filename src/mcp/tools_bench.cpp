// Serving-benchmark tools: benchmark (run handle), benchmark_status, benchmark_cancel,
// list_benchmark_images.
#include <set>

#include "core/states.h"
#include "core/strings.h"
#include "core/workspace.h"
#include "core/yaml_json.h"
#include "mcp/benchmark_args_codec.h"
#include "mcp/run_registry.h"
#include "mcp/run_view_printer.h"
#include "core/json_schema.h"
#include "mcp/tool_schema.h"
#include "mcp/tool_util.h"
#include "mcp/benchmark_output_printer.h"
#include "serve/bench_config.h"
#include "serve/metrics_schema.h"
#include "trace/report_schema.h"

namespace magpie::mcp {

using namespace magpie::schema;  // the one schema library (core/json_schema.h)
namespace {

json warnings_schema() { return s_array(s_string("warning"), "Magpie arguments accepted but not acted on"); }

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

/// Writes the YAML for `args` and starts `magpie benchmark` in the background (after run `after`
/// when given). Returns {run_id, config_file, output_dir}.
status_or<json> start_benchmark_run(const benchmark_args& args, tool_context& ctx, const std::string& after,
                                    std::vector<std::string>* warnings) {
  if (args.agentx)
    return invalid_argument("agentx: AgentX recipes (InferenceX agentic-coding workloads) are not provided by magpie");
  MAGPIE_ASSIGN_OR_RETURN(fs::path out, output_dir_path(args.output_dir, ctx));
  json doc = benchmark_yaml(args, warnings);
  MAGPIE_RETURN_IF_ERROR(check_benchmark_config(doc, ctx.settings().policy));
  MAGPIE_ASSIGN_OR_RETURN(fs::path cfg, write_request_file(out, "benchmark", "yaml", json_to_yaml(doc)));
  spawn_spec spec;
  spec.argv = {ctx.settings().self_exe.string(), "benchmark", "--benchmark-config", cfg.string(), "--output-dir", out.string()};
  for (const auto& x : args.extra_args) spec.argv.push_back(x);
  spec.env.emplace_back("MAGPIE_NO_PROGRESS", "1");
  finish_fn finish = [out, before = benchmark_dirs(out)](const run_result& r, std::string* err) {
    return finished_benchmark(out, before, r, err);
  };
  run_info info = {{"framework", serve::serving_framework_name(args.framework)}, {"model", args.model},
                   {"config_file", cfg.string()}, {"output_dir", out.string()}};
  // The child's own timeout is in the YAML; ours adds a grace period for startup/teardown.
  MAGPIE_ASSIGN_OR_RETURN(std::string id, ctx.runs().start("benchmark", spec, args.timeout_seconds + 300,
                                                          info, finish, after));
  return json{{"run_id", id}, {"config_file", cfg.string()}, {"output_dir", out.string()}};
}

tool_result benchmark_tool(const json& a, tool_context& ctx) {
  auto args = decode_benchmark_args(a);
  if (!args.ok()) return tool_result::error("invalid arguments for benchmark: " + args.get_status().message());
  std::vector<std::string> warnings;
  auto started = start_benchmark_run(*args, ctx, "", &warnings);
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
    auto args = decode_benchmark_args(configs[i]);
    if (!args.ok()) continue;  // refused below, config by config
    std::vector<std::string> w;
    status st = check_benchmark_config(benchmark_yaml(*args, &w), ctx.settings().policy);
    if (st.code() == status_code::permission_denied)
      return tool_result::error(strprintf("benchmark_batch refused: configs[%zu]: %s", i, st.message().c_str()));
  }
  for (size_t i = 0; i < configs.size(); ++i) {
    json cfg = configs[i];
    if (!cfg.contains("output_dir") && a.output_dir) cfg["output_dir"] = *a.output_dir;
    json job = {{"index", i}, {"framework", json_string(cfg, "framework")}, {"model", json_string(cfg, "model")}};
    std::string problem = validate(benchmark_args_schema(), cfg);
    std::vector<std::string> w;
    auto args = problem.empty() ? decode_benchmark_args(cfg)
                                : status_or<benchmark_args>(invalid_argument("%s", problem.c_str()));
    auto started = args.ok() ? start_benchmark_run(*args, ctx, parallel ? "" : previous, &w)
                             : status_or<json>(args.get_status());
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
    for (const auto& x : w) warnings.push_back(strprintf("configs[%zu]: ", i) + x);
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
  if (!args.run_id) return tool_result::ok("runs of this server", {{"runs", run_views_json(ctx.runs().list())}});
  const std::string& id = *args.run_id;
  auto s = ctx.runs().status(id, args.tail_lines);
  if (!s) return tool_result::error("unknown run_id '" + id + "'");
  return tool_result::ok(id + ": " + run_state_name(s->state), run_view_json(*s));
}

tool_result cancel_tool(const json& a, tool_context& ctx) {
  const std::string id = run_handle_args::decode(a).run_id.value_or("");
  auto s = ctx.runs().status(id, 0);
  if (!s) return tool_result::error("unknown run_id '" + id + "'");
  bool ok = ctx.runs().cancel(id);
  return tool_result::ok(ok ? id + ": cancellation requested" : id + " is not running",
                         {{"run_id", id}, {"cancelled", ok}, {"state", run_state_name(s->state)}});
}

/// One row of upstream Magpie's benchmark_images.yaml (research magpie.md §6.6).
struct benchmark_image {
  serve::serving_framework framework;
  const char* arch;
  const char* image;
};

constexpr benchmark_image k_images[] = {
    {serve::serving_framework::vllm, "gfx942", "vllm/vllm-openai-rocm:v0.19.1"},
    {serve::serving_framework::vllm, "gfx950", "vllm/vllm-openai-rocm:v0.19.1"},
    {serve::serving_framework::vllm, "sm_80", "vllm/vllm-openai:v0.19.1"},
    {serve::serving_framework::vllm, "sm_90", "vllm/vllm-openai:v0.19.1"},
    {serve::serving_framework::vllm, "sm_100", "vllm/vllm-openai:v0.19.1"},
    {serve::serving_framework::sglang, "gfx942", "lmsysorg/sglang:v0.5.12-rocm720-mi30x"},
    {serve::serving_framework::sglang, "gfx950", "lmsysorg/sglang:v0.5.12-rocm720-mi35x"},
    {serve::serving_framework::sglang, "sm_80", "lmsysorg/sglang:v0.5.8-cu130-amd64-runtime"},
    {serve::serving_framework::sglang, "sm_90", "lmsysorg/sglang:v0.5.8-cu130-amd64-runtime"},
    {serve::serving_framework::sglang, "sm_100", "lmsysorg/sglang:v0.5.8-cu130-amd64-runtime"},
    {serve::serving_framework::atom, "gfx942", "rocm/atom:latest"},
    {serve::serving_framework::atom, "gfx950", "rocm/atom:latest"}};

/// list_benchmark_images' one argument, decoded once: the framework (nullopt: every framework).
struct images_args {
  std::optional<serve::serving_framework> framework;
  static status_or<images_args> decode(const json& a) {
    std::string word;
    MAGPIE_RETURN_IF_ERROR(json_fields(a, "list_benchmark_images arguments").read("framework", &word));
    if (word.empty()) return images_args{};
    auto fw = serve::parse_serving_framework(word);
    if (!fw) return invalid_argument("unknown framework '%s' (vllm, sglang, atom)", word.c_str());
    return images_args{fw};
  }
};

tool_result images_tool(const json& a, tool_context&) {
  auto args = images_args::decode(a);
  if (!args.ok()) return tool_result::error(args.get_status().message());
  json images = json::object(), details = json::object();
  for (const auto& row : k_images) {
    if (args->framework && row.framework != *args->framework) continue;
    const char* fw = serve::serving_framework_name(row.framework);
    images[fw][row.arch] = row.image;
    details[fw][row.arch] = {{"image", row.image}, {"runner_type", starts_with(row.arch, "gfx") ? "amd" : "nvidia"}};
  }
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
                  benchmark_args_schema(),
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
