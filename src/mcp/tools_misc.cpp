// hardware_spec (GPU detection) and suggest_optimizations (rules over an analyze result).
#include <algorithm>
#include <functional>

#include "core/states.h"
#include "core/state_row_codec.h"
#include "core/strings.h"
#include "gpu/detect.h"
#include "core/json_schema.h"
#include "mcp/tool_util.h"
#include "core/subprocess.h"

namespace magpie::mcp {

using namespace magpie::schema;  // the one schema library (core/json_schema.h)
namespace {

json device_json(const gpu::gpu_info& g, const gpu::device& d) {
  return {{"vendor", g.vendor},
          {"architecture", g.architecture},
          {"device_id", d.index},
          {"device_name", d.name},
          {"uuid", d.uuid},
          {"compute_cap", d.compute_cap.empty() ? json(nullptr) : json(d.compute_cap)},
          {"memory_total_gb", d.memory_total_mib / 1024.0},
          {"memory_used_gb", d.memory_used_mib / 1024.0},
          {"driver_version", g.driver_version},
          {"compiler", g.compiler},
          {"profiler", g.profiler}};
}

/// get_hardware_info's arguments, decoded once.
struct hardware_args {
  int device_id = 0;
  bool include_all = false;  ///< every GPU instead of one
  static hardware_args decode(const json& a) {
    return {static_cast<int>(arg_num(a, "device_id", 0)), arg_bool(a, "include_all", false)};
  }
};

tool_result hardware_tool(const json& a, tool_context&) {
  const hardware_args args = hardware_args::decode(a);
  gpu::gpu_info g = gpu::detect();
  int id = args.device_id;
  json out = {{"gpu_count", g.devices.size()}, {"vendor", g.vendor}};
  if (g.devices.empty()) {
    out["gpu"] = nullptr;
    out["note"] = "no GPU detected (nvidia-smi / rocm-smi / rocminfo found nothing)";
    return tool_result::ok("no GPU detected", out);
  }
  if (args.include_all) {
    json all = json::object();
    for (const auto& d : g.devices) all[std::to_string(d.index)] = device_json(g, d);
    out["gpus"] = all;
    return tool_result::ok(strprintf("%zu GPUs (%s)", g.devices.size(), g.architecture.c_str()), out);
  }
  auto it = std::find_if(g.devices.begin(), g.devices.end(), [&](const gpu::device& d) { return d.index == id; });
  if (it == g.devices.end()) return tool_result::error(strprintf("no GPU with device_id %d (have %zu)", id, g.devices.size()));
  out["gpu"] = device_json(g, *it);
  return tool_result::ok(it->name + " (" + g.architecture + ")", out);
}

/// One kernel result of an analyze result, as the rules read it (decoded once).
struct analyzed_kernel {
  bool correct = false;
  std::string kernel_id;   ///< extra.kernel_id, else kernel_id
  json score = nullptr;    ///< the result's score as given (null when absent)
  /// performance_result.summary in order: metric name → value (a number or {value: number}).
  std::vector<std::pair<std::string, std::optional<double>>> metrics;
  std::optional<double> median_ns, rel_stdev;  ///< timing.stats_ns (0 when a field is missing)
};

/// suggest_optimizations' argument, decoded once: the kernel results inside the analyze result.
struct suggest_args {
  std::vector<analyzed_kernel> kernels;
  static status_or<suggest_args> decode(const json& a);
};

analyzed_kernel decode_kernel(const json& r) {
  analyzed_kernel k;
  k.correct = row_correct(r);
  k.kernel_id = r.contains("extra") ? json_string(r["extra"], "kernel_id") : json_string(r, "kernel_id");
  if (r.contains("score")) k.score = r["score"];
  const json& perf = json_value(r, "performance_result");
  const json& summary = json_value(perf, "summary");
  if (summary.is_object())
    for (auto it = summary.begin(); it != summary.end(); ++it) {
      auto v = json_as_number(it.value());
      k.metrics.emplace_back(it.key(), v ? v : json_as_number(json_value(it.value(), "value")));
    }
  const json& timing = json_value(r, "timing");
  if (timing.is_object() && timing.contains("stats_ns")) {
    k.median_ns = json_number(timing["stats_ns"], "median", 0);
    k.rel_stdev = json_number(timing["stats_ns"], "rel_stdev", 0);
  }
  return k;
}

/// Every kernel result object inside an analyze tool result / analyze or compare report.
void collect_results(const json& j, std::vector<analyzed_kernel>* out) {
  if (j.is_array()) {
    for (const auto& x : j) collect_results(x, out);
  } else if (j.is_object()) {
    if (j.contains("correctness_state") && (j.contains("performance_result") || j.contains("timing")))
      out->push_back(decode_kernel(j));
    for (const char* k : {"results", "kernel_results", "report"})
      if (j.contains(k)) collect_results(j[k], out);
  }
}

status_or<suggest_args> suggest_args::decode(const json& a) {
  json input = json_value(a, "analysis_result");
  if (input.is_string()) {  // upstream Magpie passes the analyze result as a JSON string
    MAGPIE_ASSIGN_OR_RETURN(input, parse_json(*json_as_string(input), "analysis_result"));
  }
  suggest_args r;
  collect_results(input, &r.kernels);
  if (r.kernels.empty())
    return invalid_argument("analysis_result holds no kernel result (pass the analyze tool's output or an analyze_report.json)");
  return r;
}

/// Looks up a metric value by any of the name fragments (in the summary's order per fragment).
std::optional<double> find_metric(const analyzed_kernel& k, std::initializer_list<const char*> names) {
  for (const char* n : names)
    for (const auto& [name, value] : k.metrics)
      if (contains(name, n) && value) return value;
  return std::nullopt;
}

struct finding {
  json bottleneck, suggestion;
  int impact;  // 3 high, 2 medium, 1 low
};

void apply_rules(const analyzed_kernel& r, std::vector<finding>* f) {
  auto add = [&](const char* type, const char* sev, double v, std::string desc, const char* cat, std::string sug,
                 int impact) {
    f->push_back({{{"type", type}, {"severity", sev}, {"value", v}, {"description", desc}},
                  {{"category", cat}, {"suggestion", sug}, {"impact", impact == 3 ? "high" : impact == 2 ? "medium" : "low"},
                   {"details", desc}},
                  impact});
  };
  if (!r.correct) {
    add("incorrect", "high", 0, "the kernel did not pass correctness", "correctness",
        "fix correctness before optimizing: performance of an incorrect kernel is not ranked", 3);
    return;
  }
  // AMD (Magpie's rules, rocprof-compute names).
  if (auto cu = find_metric(r, {"Active CUs"}); cu && *cu < 50)
    add("low_cu_occupancy", *cu < 25 ? "high" : "medium", *cu, strprintf("active CUs %.0f%%", *cu), "parallelism",
        "launch more workgroups or reduce per-workgroup resources (LDS, VGPRs) so more CUs are busy", *cu < 25 ? 3 : 2);
  auto mfma = find_metric(r, {"MFMA_Util", "MFMA Util"});
  if (mfma && *mfma < 50 && find_metric(r, {"MFMA FLOPs", "MFMA_FLOPs"}).value_or(0) > 0)
    add("low_mfma_utilization", "medium", *mfma, strprintf("MFMA utilization %.0f%%", *mfma), "compute",
        "feed the matrix cores: larger tiles, double-buffered LDS loads, fewer dependent instructions", 2);
  if (auto valu = find_metric(r, {"VALU_Util", "VALU Util"}); valu && *valu > 50 && mfma.value_or(0) < 10)
    add("valu_bound", "medium", *valu, strprintf("VALU utilization %.0f%% with little MFMA use", *valu), "compute",
        "vectorize / move dense math to MFMA instructions", 2);
  if (auto vmem = find_metric(r, {"VMEM_Util", "VMEM Util"}); vmem && *vmem > 70)
    add("memory_bound", "high", *vmem, strprintf("vector memory utilization %.0f%%", *vmem), "memory",
        "reduce global traffic: fuse, reuse data through LDS, use wider loads", 3);
  // NVIDIA (Nsight Compute metric names).
  if (auto occ = find_metric(r, {"sm__warps_active.avg.pct_of_peak_sustained_active", "achieved_occupancy"}); occ && *occ < 50)
    add("low_occupancy", *occ < 25 ? "high" : "medium", *occ, strprintf("achieved occupancy %.0f%%", *occ), "parallelism",
        "raise occupancy: fewer registers/shared memory per block, more blocks", *occ < 25 ? 3 : 2);
  auto dram = find_metric(r, {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__compute_memory_throughput"});
  auto sm = find_metric(r, {"sm__throughput.avg.pct_of_peak_sustained_elapsed"});
  if (dram && *dram > 70 && sm.value_or(0) < 40)
    add("memory_bound", "high", *dram, strprintf("DRAM throughput %.0f%% of peak", *dram), "memory",
        "memory bound: fuse with neighbours, keep data in shared memory / L2, use vectorized loads", 3);
  if (dram && sm && *dram < 30 && *sm < 30)
    add("latency_bound", "medium", *sm, strprintf("SM %.0f%% and DRAM %.0f%% of peak", *sm, *dram), "latency",
        "neither compute nor memory is busy: expose more parallelism/ILP, check launch configuration", 2);
  if (r.median_ns) {
    double med_us = *r.median_ns / 1e3;
    double noise = r.rel_stdev.value_or(0);
    if (med_us > 0 && med_us < 10)
      add("kernel_launch_overhead", "medium", med_us, strprintf("median %.2f us: launch overhead dominates", med_us),
          "fusion", "fuse with neighbouring kernels or use CUDA graphs to amortize launches", 2);
    if (noise > 0.05)
      add("noisy_measurement", "low", noise, strprintf("timing relative stdev %.1f%%", noise * 100), "measurement",
          "results are noisy: pin clocks, increase samples or the time budget before comparing", 1);
  }
}

tool_result suggest_tool(const json& a, tool_context&) {
  auto args = suggest_args::decode(a);
  if (!args.ok()) return tool_result::error(args.get_status().message());
  const std::vector<analyzed_kernel>& results = args->kernels;
  std::vector<finding> f;
  for (const auto& r : results) apply_rules(r, &f);
  std::stable_sort(f.begin(), f.end(), [](const finding& x, const finding& y) { return x.impact > y.impact; });
  json b = json::array(), s = json::array();
  size_t high = 0;
  for (const auto& x : f) {
    b.push_back(x.bottleneck);
    s.push_back(x.suggestion);
    high += x.impact == 3;
  }
  const analyzed_kernel& first = results[0];
  json out = {{"kernel_id", first.kernel_id}, {"overall_score", first.score},
              {"bottlenecks", b}, {"suggestions", s},
              {"summary", {{"total_bottlenecks", b.size()}, {"total_suggestions", s.size()}, {"high_impact_suggestions", high}}}};
  return tool_result::ok(strprintf("%zu suggestions (%zu high impact)", s.size(), high), out);
}

/// configure_gpu's arguments, decoded (the schema has checked their shapes).
struct gpu_settings {
  std::optional<std::pair<int64_t, int64_t>> gpu_clock_mhz, mem_clock_mhz;  ///< [min, max]
  std::optional<double> power_limit_watts;
  std::optional<std::vector<int>> device_ids;  ///< unset: every detected device
  bool reset = false;
};

status_or<gpu_settings> decode_gpu_settings(const json& a) {
  gpu_settings g;
  json_fields f(a, "configure_gpu arguments");
  for (auto [key, dst] : {std::pair{"gpu_clock_mhz", &g.gpu_clock_mhz}, {"mem_clock_mhz", &g.mem_clock_mhz}}) {
    std::vector<int> r;
    MAGPIE_RETURN_IF_ERROR(f.read(key, &r));
    if (json_member(a, key) == nullptr || json_value(a, key).is_null()) continue;
    if (r.size() != 2 || r[0] > r[1]) return invalid_argument("%s: [min, max] with min <= max expected", key);
    *dst = std::pair<int64_t, int64_t>{r[0], r[1]};
  }
  double watts = 0;
  MAGPIE_RETURN_IF_ERROR(f.read("power_limit_watts", &watts));
  if (json_as_number(json_value(a, "power_limit_watts"))) g.power_limit_watts = watts;
  if (const json* ids = json_member(a, "device_ids"); ids && ids->is_array()) {
    std::vector<int> v;
    MAGPIE_RETURN_IF_ERROR(f.read("device_ids", &v));
    g.device_ids = std::move(v);
  }
  g.reset = arg_bool(a, "reset", false);
  return g;
}

/// The vendor tool commands for one device (Magpie's configure_gpu, research magpie.md §10).
std::vector<std::vector<std::string>> gpu_commands(const std::string& vendor, int id, const gpu_settings& g) {
  std::string d = std::to_string(id);
  std::vector<std::vector<std::string>> cmds;
  auto range = [](const std::pair<int64_t, int64_t>& r) {
    return strprintf("%lld,%lld", static_cast<long long>(r.first), static_cast<long long>(r.second));
  };
  if (vendor == "NVIDIA") {
    if (g.reset) return {{"nvidia-smi", "-i", d, "-rgc"}, {"nvidia-smi", "-i", d, "-rmc"}};
    if (g.power_limit_watts) cmds.push_back({"nvidia-smi", "-i", d, "-pl", strprintf("%g", *g.power_limit_watts)});
    if (g.gpu_clock_mhz) cmds.push_back({"nvidia-smi", "-i", d, "-lgc", range(*g.gpu_clock_mhz)});
    if (g.mem_clock_mhz) cmds.push_back({"nvidia-smi", "-i", d, "-lmc", range(*g.mem_clock_mhz)});
  } else {
    if (g.reset) return {{"rocm-smi", "-d", d, "--resetclocks"}};
    if (g.power_limit_watts) cmds.push_back({"rocm-smi", "-d", d, "--setpoweroverdrive", strprintf("%g", *g.power_limit_watts)});
    if (g.gpu_clock_mhz) cmds.push_back({"rocm-smi", "-d", d, "--setsclk", std::to_string(g.gpu_clock_mhz->second)});
    if (g.mem_clock_mhz) cmds.push_back({"rocm-smi", "-d", d, "--setmclk", std::to_string(g.mem_clock_mhz->second)});
  }
  return cmds;
}

tool_result configure_gpu_tool(const json& a, tool_context&) {
  gpu::gpu_info g = gpu::detect();
  if (g.devices.empty() || (g.vendor != "NVIDIA" && g.vendor != "AMD"))
    return tool_result::error("configure_gpu: no GPU detected (nvidia-smi / rocm-smi found nothing)");
  auto settings = decode_gpu_settings(a);
  if (!settings.ok()) return tool_result::error(settings.get_status().message());
  const bool reset = settings->reset;
  std::vector<int> ids;
  if (settings->device_ids) ids = *settings->device_ids;
  else
    for (const auto& d : g.devices) ids.push_back(d.index);
  json results = json::object(), errors = json::array(), ran = json::array();
  for (int id : ids) {
    bool ok = true;
    for (const auto& cmd : gpu_commands(g.vendor, id, *settings)) {
      spawn_spec s;
      s.argv = cmd;
      ran.push_back(argv_to_display(cmd));
      auto r = run_command(s, 60.0);
      if (!r.ok() || !r->success()) {
        ok = false;
        errors.push_back(argv_to_display(cmd) + ": " + (r.ok() ? r->describe() + ": " + std::string(trim(r->output_tail(300))) : r.get_status().message()));
      }
    }
    results[std::to_string(id)] = ok;
  }
  json out = {{"action", reset ? "reset" : "configure"}, {"vendor", g.vendor}, {"results", results}, {"commands", ran}, {"errors", errors}};
  if (!reset) {
    json cfg = json::object();
    for (const char* k : {"power_limit_watts", "gpu_clock_mhz", "mem_clock_mhz"})
      if (a.contains(k)) cfg[k] = a[k];
    out["config"] = cfg;
  }
  return tool_result::ok(strprintf("%s on %zu GPU(s); %zu error(s)", reset ? "reset" : "configure", ids.size(), errors.size()), out);
}

json device_schema() {
  json nstr = {{"type", {"string", "null"}}};
  return closed({{"vendor", s_string("AMD | NVIDIA")}, {"architecture", s_string("gfx942 | sm_90 ...")},
                 {"device_id", s_integer("index", 0)}, {"device_name", s_string("name")}, {"uuid", s_string("uuid")},
                 {"compute_cap", nstr}, {"memory_total_gb", s_number("GiB", 0)}, {"memory_used_gb", s_number("GiB", 0)},
                 {"driver_version", s_string("driver")}, {"compiler", s_string("hipcc | nvcc | empty")},
                 {"profiler", s_string("rocprof-compute | ncu | empty")}},
                {"vendor", "architecture", "device_id", "device_name"});
}

}  // namespace

void add_misc_tools(std::vector<tool_def>* out) {
  json gpu = device_schema();
  json nullable_gpu = gpu;
  nullable_gpu["type"] = {"object", "null"};
  out->push_back({"hardware_spec", "GPU hardware",
                  "Detected GPUs: vendor, architecture, name, memory, compute capability, driver, compiler and "
                  "profiler on PATH.",
                  closed({{"device_id", with_default(s_integer("GPU index", 0), 0)},
                          {"include_all", with_default(s_boolean("every GPU"), false)}},
                         {}),
                  closed({{"gpu_count", s_integer("GPUs", 0)}, {"vendor", s_string("AMD | NVIDIA | UNKNOWN")},
                          {"gpu", nullable_gpu},
                          {"gpus", {{"type", "object"}, {"additionalProperties", gpu}, {"description", "index → device"}}},
                          {"note", s_string("why nothing was found")}},
                         {"gpu_count", "vendor"}),
                  true, hardware_tool});
  json range = s_array(s_integer("MHz", 0), "[min, max] MHz", 2);
  range["maxItems"] = 2;
  json nullable_range = range;
  nullable_range["type"] = {"array", "null"};
  out->push_back({"configure_gpu", "Configure GPU power and clocks",
                  "Set a power limit and clock ranges (nvidia-smi -pl/-lgc/-lmc; rocm-smi --setpoweroverdrive/--setsclk/"
                  "--setmclk) or reset the clocks, per device. Usually needs root; failures are listed per command.",
                  closed({{"device_ids", {{"type", {"array", "null"}}, {"items", s_integer("GPU index", 0)},
                                          {"description", "GPUs to configure (null: all)"}}},
                          {"power_limit_watts", {{"type", {"number", "null"}}, {"minimum", 1}, {"description", "power limit, W"}}},
                          {"gpu_clock_mhz", nullable_range},
                          {"mem_clock_mhz", nullable_range},
                          {"reset", with_default(s_boolean("reset clocks instead of setting them"), false)}},
                         {}),
                  closed({{"action", s_enum("what was done", {"configure", "reset"})}, {"vendor", s_string("vendor")},
                          {"config", closed({{"power_limit_watts", {{"type", {"number", "null"}}, {"description", "W"}}},
                                             {"gpu_clock_mhz", nullable_range}, {"mem_clock_mhz", nullable_range}},
                                            {})},
                          {"results", {{"type", "object"}, {"additionalProperties", {{"type", "boolean"}}},
                                       {"description", "device index → every command succeeded"}}},
                          {"commands", s_array(s_string("command"), "commands run")},
                          {"errors", s_array(s_string("error"), "failed commands")}},
                         {"action", "vendor", "results", "commands", "errors"}),
                  false, configure_gpu_tool});
  json finding = closed({{"type", s_string("bottleneck type")}, {"severity", s_enum("severity", {"high", "medium", "low"})},
                         {"value", s_number("metric value")}, {"description", s_string("what was seen")}},
                        {"type", "severity", "value", "description"});
  json suggestion = closed({{"category", s_string("area")}, {"suggestion", s_string("what to try")},
                            {"impact", s_enum("impact", {"high", "medium", "low"})}, {"details", s_string("why")}},
                           {"category", "suggestion", "impact", "details"});
  out->push_back({"suggest_optimizations", "Suggest optimizations",
                  "Rule-based bottlenecks and suggestions from an analyze result (profiler metrics of Nsight Compute "
                  "or rocprof-compute, timing and correctness), sorted by impact.",
                  closed({{"analysis_result", {{"type", {"object", "string"}},
                                               {"description", "the analyze tool's result or an analyze_report.json, "
                                                               "as an object or a JSON string (Magpie)"}}}},
                         {"analysis_result"}),
                  closed({{"kernel_id", s_string("kernel")}, {"overall_score", {{"type", {"number", "null"}}}},
                          {"bottlenecks", s_array(finding, "found")}, {"suggestions", s_array(suggestion, "ranked")},
                          {"summary", closed({{"total_bottlenecks", s_integer("count", 0)},
                                              {"total_suggestions", s_integer("count", 0)},
                                              {"high_impact_suggestions", s_integer("count", 0)}},
                                             {"total_bottlenecks", "total_suggestions", "high_impact_suggestions"})}},
                         {"kernel_id", "overall_score", "bottlenecks", "suggestions", "summary"}),
                  true, suggest_tool});
}

const std::vector<tool_def>& all_tools() {
  static const std::vector<tool_def> tools = [] {
    std::vector<tool_def> t;
    add_misc_tools(&t);
    add_kernel_tools(&t);
    add_benchmark_tools(&t);
    add_trace_tools(&t);
    add_results_tools(&t);
    add_jobs_tools(&t);
    add_optimize_tools(&t);
    return t;
  }();
  return tools;
}

const tool_def* find_tool(const std::string& name) {
  for (const auto& t : all_tools())
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace magpie::mcp
