// Serving-benchmark tools: benchmark (run handle), benchmark_status, benchmark_cancel,
// list_benchmark_images.
#include <cctype>

#include "core/strings.h"
#include "core/workspace.h"
#include "core/yaml.h"
#include "mcp/run_registry.h"
#include "mcp/schema.h"
#include "mcp/tool_util.h"

namespace magpie::mcp {
namespace {

json closed(json props, std::vector<std::string> required) {
  json j = {{"type", "object"}, {"properties", std::move(props)}, {"additionalProperties", false}};
  if (!required.empty()) j["required"] = std::move(required);
  return j;
}

/// Magpie's benchmark: YAML from tool arguments (research magpie.md §6.1).
json benchmark_yaml(const json& a) {
  json envs = {{"TP", static_cast<int>(arg_num(a, "tp", 1))},
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
  json b = {{"framework", arg_str(a, "framework")},
            {"model", arg_str(a, "model")},
            {"precision", arg_str(a, "precision", "fp8")},
            {"run_mode", arg_str(a, "run_mode", "docker")},
            {"envs", envs},
            {"profiler", {{"torch_profiler", {{"enabled", arg_bool(a, "torch_profiler", false)}}},
                          {"system_profiler", {{"enabled", arg_bool(a, "system_profiler", false)}}}}},
            {"timeout_seconds", static_cast<int>(arg_num(a, "timeout_seconds", 3600))}};
  for (const char* k : {"docker_image", "gpu_arch", "inferencex_path", "benchmark_script", "runner_type"})
    if (!arg_str(a, k).empty()) b[k] = arg_str(a, k);
  if (arg_bool(a, "gap_analysis_enabled", false)) {
    b["gap_analysis"] = {{"enabled", true},
                         {"top_k", static_cast<int>(arg_num(a, "gap_analysis_top_k", 20))},
                         {"trace_start_pct", arg_num(a, "gap_analysis_start_pct", 0)},
                         {"trace_end_pct", arg_num(a, "gap_analysis_end_pct", 100)},
                         {"min_duration_us", arg_num(a, "gap_analysis_min_duration_us", 0)}};
  }
  if (a.contains("benchmark_config") && a["benchmark_config"].is_object())
    for (auto it = a["benchmark_config"].begin(); it != a["benchmark_config"].end(); ++it) b[it.key()] = it.value();
  return {{"benchmark", b}};
}

tool_result benchmark_tool(const json& a, tool_context& ctx) {
  auto out = output_dir_arg(a, ctx);
  if (!out.ok()) return tool_result::error(out.get_status().message());
  json doc = benchmark_yaml(a);
  auto cfg = write_request_file(*out, "benchmark", "yaml", json_to_yaml(doc));
  if (!cfg.ok()) return tool_result::error(cfg.get_status().message());
  spawn_spec spec;
  spec.argv = {ctx.settings().self_exe.string(), "benchmark", "--benchmark-config", cfg->string(), "--output-dir",
               out->string()};
  for (const auto& x : arg_strings(a, "extra_args")) spec.argv.push_back(x);
  spec.env.emplace_back("MAGPIE_NO_PROGRESS", "1");
  fs::path out_dir = *out;
  finish_fn finish = [out_dir](const run_result& r, std::string* err) -> json {
    fs::path ws;
    for (const auto& l : split(r.out, '\n'))
      if (starts_with(trim(l), "Workspace:")) ws = std::string(trim(std::string_view(l).substr(l.find(':') + 1)));
    std::error_code ec;
    if (ws.empty()) {  // newest benchmark_* made during this run
      for (const auto& e : fs::directory_iterator(out_dir, ec)) {
        std::string n = e.path().filename().string();
        if (starts_with(n, "benchmark_") && fs::exists(e.path() / "benchmark_report.json", ec) &&
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
    json res = {{"workspace", ws.string()}};
    for (const char* k : {"success", "framework", "model", "throughput", "latency", "top_bottlenecks", "errors",
                          "execution_time", "gap_analysis"})
      if (rep->contains(k)) res[k] = (*rep)[k];
    return res;
  };
  json info = {{"framework", arg_str(a, "framework")}, {"model", arg_str(a, "model")},
               {"config_file", cfg->string()}, {"output_dir", out->string()}};
  // The child's own timeout is in the YAML; ours adds a grace period for startup/teardown.
  auto id = ctx.runs().start("benchmark", spec, arg_num(a, "timeout_seconds", 3600) + 300, info, finish);
  if (!id.ok()) return tool_result::error("benchmark could not start: " + id.get_status().message());
  json r = {{"run_id", *id}, {"state", "running"}, {"config_file", cfg->string()}, {"output_dir", out->string()},
            {"poll", "call benchmark_status with this run_id; benchmark_cancel stops it"}};
  return tool_result::ok("benchmark started: " + *id, r);
}

tool_result status_tool(const json& a, tool_context& ctx) {
  if (!a.contains("run_id")) return tool_result::ok("runs of this server", {{"runs", ctx.runs().list()}});
  auto s = ctx.runs().status(arg_str(a, "run_id"), static_cast<size_t>(arg_num(a, "tail_lines", 20)));
  if (!s) return tool_result::error("unknown run_id '" + arg_str(a, "run_id") + "'");
  return tool_result::ok(arg_str(a, "run_id") + ": " + json_string(*s, "state"), *s);
}

tool_result cancel_tool(const json& a, tool_context& ctx) {
  std::string id = arg_str(a, "run_id");
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
  std::string fw = arg_str(a, "framework");
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

}  // namespace

void add_benchmark_tools(std::vector<tool_def>* out) {
  out->push_back(
      {"benchmark", "Benchmark an inference server",
       "Start a serving benchmark (vLLM, SGLang, ATOM or an OpenAI-compatible server) in the background and "
       "return a run handle at once. Poll benchmark_status(run_id); benchmark_cancel stops it. The finished "
       "run's benchmark_report.json is registered in the results store.",
       closed({{"framework", s_enum("serving framework", {"vllm", "sglang", "atom", "openai"})},
               {"model", s_string("model id or local path")},
               {"precision", with_default(s_string("precision tag"), "fp8")},
               {"run_mode", with_default(s_enum("run mode", {"docker", "local"}), "docker")},
               {"tp", with_default(s_integer("tensor parallel size", 1), 1)},
               {"concurrency", with_default(s_integer("max concurrent requests", 1), 32)},
               {"input_len", with_default(s_integer("input tokens", 1), 1024)},
               {"output_len", with_default(s_integer("output tokens", 1), 512)},
               {"torch_profiler", with_default(s_boolean("record torch-profiler traces"), false)},
               {"system_profiler", with_default(s_boolean("record a system profile"), false)},
               {"gap_analysis_enabled", with_default(s_boolean("gap analysis of the traces"), false)},
               {"gap_analysis_top_k", s_integer("gap analysis top k", 1)},
               {"gap_analysis_start_pct", s_number("window start %", 0, 100)},
               {"gap_analysis_end_pct", s_number("window end %", 0, 100)},
               {"gap_analysis_min_duration_us", s_number("min event duration, us", 0)},
               {"docker_image", s_string("image override")},
               {"gpu_arch", s_string("GPU architecture override")},
               {"inferencex_path", s_string("InferenceX checkout")},
               {"benchmark_script", s_string("benchmark script override")},
               {"runner_type", s_string("runner type")},
               {"timeout_seconds", with_default(s_number("benchmark limit, s", 1), 3600)},
               {"output_dir", s_string("results directory (default ./results)")},
               {"extra_envs", s_any_object("extra envs for the benchmark script")},
               {"benchmark_config", s_any_object("extra keys merged into the benchmark: YAML")},
               {"extra_args", s_array(s_string("arg"), "extra `magpie benchmark` CLI arguments")}},
              {"framework", "model"}),
       s_object({{"run_id", s_string("handle")}, {"state", s_string("running")}}, {"run_id", "state"}, false), false,
       benchmark_tool});
  out->push_back({"benchmark_status", "Benchmark run status",
                  "State of a background run (running, succeeded, failed, cancelled, timed_out), elapsed time, the "
                  "last log lines and, when finished, the result. Without run_id: every run of this server.",
                  closed({{"run_id", s_string("handle from benchmark")},
                          {"tail_lines", with_default(s_integer("log lines returned", 0), 20)}},
                         {}),
                  s_any_object("status"), true, status_tool});
  out->push_back({"benchmark_cancel", "Cancel a benchmark run",
                  "Stop a running background run (its process group is terminated).",
                  closed({{"run_id", s_string("handle from benchmark")}}, {"run_id"}),
                  s_object({{"run_id", s_string("handle")}, {"cancelled", s_boolean("requested")}}, {"run_id"}, false),
                  false, cancel_tool});
  out->push_back({"list_benchmark_images", "List benchmark images",
                  "Container images per framework and GPU architecture (Magpie's benchmark_images.yaml).",
                  closed({{"framework", s_string("vllm, sglang or atom (default: all)")}}, {}),
                  s_object({{"images", s_any_object("framework → arch → image")}}, {"images"}, false), true,
                  images_tool});
}

}  // namespace magpie::mcp
