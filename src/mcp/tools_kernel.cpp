// Kernel tools: analyze, compare (run `magpie analyze|compare -k <generated YAML>` as a child
// and read the report it writes), create_kernel_config.
#include "mcp/kernel_output_printer.h"

#include "core/log.h"
#include "core/states.h"
#include "core/strings.h"
#include "core/yaml_json.h"
#include "kernel/compare_printer.h"
#include "kernel/eval_schema.h"
#include "core/json_schema.h"
#include "mcp/tool_util.h"
#include "sched/options.h"

namespace magpie::mcp {

using namespace magpie::schema;  // the one schema library (core/json_schema.h)
namespace {

// The keys of a report entry (kernel_eval_json) that a kernel row repeats, and those the
// analyze tool adds; their schemas come from kernel::kernel_eval_schema().
constexpr const char* k_row_keys[] = {"compiling_state", "correctness_state", "performance_state", "score", "errors", "outcome"};
constexpr const char* k_analyze_keys[] = {"compiling_result", "correctness_result", "performance_result",
                                          "timing",           "correctness",        "kernel_config"};

constexpr double k_default_kernel_timeout_s = 1800;

/// The arguments of the kernel tools (analyze, compare, create_kernel_config), decoded once.
/// Optional values are nullopt when the argument was not given (the CLI's defaults apply).
struct kernel_args {
  std::string kernel_path, kernel_type, testcase_command, working_dir, compile_command, reference_path;
  std::optional<std::string> kernel_id;
  std::string output_dir, output_path;
  std::vector<std::string> kernel_paths, testcase_commands;  ///< compare
  int baseline_index = 0;
  bool check_performance = true;
  std::optional<int64_t> seed, trials;
  std::optional<double> atol, rtol, max_time_s;
  std::optional<std::string> correctness_method;
  // upstream Magpie's backend / Accordo / environment arguments (magpie_compat_flags)
  sched::run_environment environment = sched::run_environment::local;
  std::string performance_backend, correctness_backend;
  std::optional<double> accordo_atol, accordo_rtol, accordo_timeout_s;
  std::vector<std::string> unused_accordo;  ///< Accordo arguments set that magpie has no use for
  double timeout_s = k_default_kernel_timeout_s;

  static kernel_args decode(const json& a) {
    kernel_args r;
    r.kernel_path = arg_str(a, "kernel_path");
    // Magpie's kernel_type names (torch and py are pytorch); "" leaves the type to the file.
    std::string t = to_lower(arg_str(a, "kernel_type"));
    r.kernel_type = t == "torch" || t == "py" ? "pytorch" : t;
    r.testcase_command = arg_str(a, "testcase_command");
    r.working_dir = arg_str(a, "working_dir");
    r.compile_command = arg_str(a, "compile_command");
    r.reference_path = arg_str(a, "reference_path");
    r.kernel_id = json_as_string(json_value(a, "kernel_id"));
    r.output_dir = arg_str(a, "output_dir");
    r.output_path = arg_str(a, "output_path");
    r.kernel_paths = arg_strings(a, "kernel_paths");
    r.testcase_commands = arg_strings(a, "testcase_commands");
    r.baseline_index = static_cast<int>(arg_num(a, "baseline_index", 0));
    r.check_performance = arg_bool(a, "check_performance", true);
    auto given = [&](const char* k, double dflt) { return a.contains(k) ? std::optional<double>(arg_num(a, k, dflt)) : std::nullopt; };
    if (auto v = given("seed", 0)) r.seed = static_cast<int64_t>(*v);
    if (auto v = given("trials", 5)) r.trials = static_cast<int64_t>(*v);
    r.atol = given("atol", 0);
    r.rtol = given("rtol", 0);
    r.max_time_s = given("max_time_seconds", 15);
    if (a.contains("correctness_method")) r.correctness_method = arg_str(a, "correctness_method");
    // The schema admits only the codec's words (sched/options.h); "" is local.
    r.environment = sched::parse_run_environment(arg_str(a, "environment")).value_or(sched::run_environment::local);
    r.performance_backend = arg_str(a, "performance_backend");
    r.correctness_backend = arg_str(a, "correctness_backend");
    r.accordo_atol = given("accordo_atol", 1e-6);
    r.accordo_rtol = given("accordo_rtol", 1e-5);
    r.accordo_timeout_s = given("accordo_timeout_seconds", 30);
    for (const char* k : {"accordo_kernel_name", "accordo_reference_binary", "accordo_optimized_binary", "accordo_equal_nan"})
      if (arg_set(a, k)) r.unused_accordo.emplace_back(k);
    r.timeout_s = arg_num(a, "timeout_seconds", k_default_kernel_timeout_s);
    return r;
  }
};

json kernel_entry(const std::string& id, const std::string& type, const std::string& path, const std::string& testcase,
                  const std::string& working_dir, const std::string& compile) {
  json k = {{"id", id}, {"source_files", json::array({absolute_path(path).string()})}};
  if (!type.empty()) k["type"] = type;
  if (!working_dir.empty()) k["working_dir"] = absolute_path(working_dir).string();
  if (!compile.empty()) k["compile_command"] = compile;
  if (!testcase.empty()) k["testcase_command"] = testcase;
  return k;
}

/// Magpie's backend / Accordo / environment arguments: applied where magpie has the meaning,
/// otherwise a warning in the result. Returns the global flags (before the subcommand).
std::vector<std::string> magpie_compat_flags(const kernel_args& a, std::vector<std::string>* argv, json* warnings) {
  std::vector<std::string> global;
  const std::string env = sched::run_environment_name(a.environment);
  switch (a.environment) {
    case sched::run_environment::slurm:
    case sched::run_environment::ray: global = {"-e", env}; break;  // scheduler jobs (docs/slurm.md, docs/ray.md)
    case sched::run_environment::container:
      warnings->push_back("environment '" + env + "' is not provided by magpie (no container executor): ran locally");
      break;
    case sched::run_environment::local: break;
  }
  const std::string& perf = a.performance_backend;
  if (perf == "ncu" || perf == "rocprof_compute" || perf == "cupti" || perf == "none") argv->insert(argv->end(), {"--profiler", perf});
  else if (perf == "metrix")
    warnings->push_back("performance_backend 'metrix' (IntelliKit, AMD) is not provided: the default profiler was used");
  bool accordo = a.correctness_backend == "accordo";
  if (accordo)
    warnings->push_back("correctness_backend 'accordo' (IntelliKit, AMD) is not provided: outputs are compared with the "
                        "reference by magpie's harness (accordo_atol / accordo_rtol applied as atol / rtol)");
  if (accordo && !a.atol && a.accordo_atol) argv->insert(argv->end(), {"--atol", strprintf("%.17g", *a.accordo_atol)});
  if (accordo && !a.rtol && a.accordo_rtol) argv->insert(argv->end(), {"--rtol", strprintf("%.17g", *a.accordo_rtol)});
  for (const auto& k : a.unused_accordo) warnings->push_back(k + " is accepted but not used (no Accordo backend)");
  return global;
}

/// Flags shared by analyze and compare tool calls.
void common_flags(const kernel_args& a, std::vector<std::string>* argv) {
  if (!a.check_performance) argv->push_back("--no-perf");
  if (!a.reference_path.empty()) argv->insert(argv->end(), {"--reference", a.reference_path});
  if (a.seed) argv->insert(argv->end(), {"--seed", std::to_string(*a.seed)});
  if (a.trials) argv->insert(argv->end(), {"--trials", std::to_string(*a.trials)});
  if (a.atol) argv->insert(argv->end(), {"--atol", strprintf("%.17g", *a.atol)});
  if (a.rtol) argv->insert(argv->end(), {"--rtol", strprintf("%.17g", *a.rtol)});
  if (a.correctness_method) argv->insert(argv->end(), {"--correctness-method", *a.correctness_method});
  if (a.max_time_s) argv->insert(argv->end(), {"--max-time", strprintf("%.17g", *a.max_time_s)});
}

/// Runs the kernel CLI for `mode` with the YAML document; returns the parsed report and workspace.
status_or<std::pair<json, fs::path>> run_kernel_cli(tool_context& ctx, const kernel_args& a, const std::string& mode,
                                                    json yaml_doc, std::vector<std::string> extra, json* warnings) {
  MAGPIE_ASSIGN_OR_RETURN(fs::path out, output_dir_path(a.output_dir, ctx));
  if (a.correctness_backend == "accordo" && a.accordo_timeout_s)
    yaml_doc["correctness"] = {{"timeout_seconds", *a.accordo_timeout_s}};
  MAGPIE_ASSIGN_OR_RETURN(fs::path cfg, write_request_file(out, mode, "yaml", json_to_yaml(yaml_doc)));
  std::vector<std::string> argv = {mode, "-k", cfg.string(), "-o", out.string()};
  std::vector<std::string> global = magpie_compat_flags(a, &argv, warnings);
  common_flags(a, &argv);
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.begin(), global.begin(), global.end());
  MAGPIE_ASSIGN_OR_RETURN(cli_run run, run_magpie(ctx, argv, a.timeout_s,
                                                  out, mode + "_"));
  fs::path report = run.workspace / (mode + "_report.json");
  std::error_code ec;
  if (run.workspace.empty() || !fs::exists(report, ec))
    return error(status_code::failed_precondition, "magpie %s wrote no %s_report.json (%s): %s", mode.c_str(), mode.c_str(),
                 run.outcome.result.describe().c_str(), std::string(trim(run.outcome.result.output_tail(1500))).c_str());
  MAGPIE_ASSIGN_OR_RETURN(json r, read_json_file(report));
  return std::make_pair(std::move(r), run.workspace);
}

json kernel_row(const json& res) {
  json row = json::object();
  for (const char* k : k_row_keys)
    if (res.contains(k)) row[k] = res[k];
  if (res.contains("extra")) row["kernel_id"] = json_string(res["extra"], "kernel_id");
  if (res.contains("timing") && res["timing"].is_object() && res["timing"].contains("stats_ns"))
    row["kernel_time_median_us"] = json_number(res["timing"]["stats_ns"], "median", 0) / 1e3;
  return row;
}

/// isError for kernel files that do not exist (Magpie's tools otherwise report SKIPPED stages).
std::string missing_file(const std::vector<std::string>& paths, const char* what) {
  for (const auto& p : paths) {
    std::error_code ec;
    if (p.empty() || !fs::is_regular_file(absolute_path(p), ec)) return std::string(what) + " not found: '" + p + "'";
  }
  return {};
}

tool_result analyze_tool(const json& arguments, tool_context& ctx) {
  const kernel_args a = kernel_args::decode(arguments);
  const std::string& path = a.kernel_path;
  std::vector<std::string> files = {path};
  if (!a.reference_path.empty()) files.push_back(a.reference_path);
  if (std::string m = missing_file(files, "kernel file"); !m.empty()) return tool_result::error(m);
  std::string id = a.kernel_id.value_or(fs::path(path).stem().string());
  json doc = {{"kernel", kernel_entry(id, a.kernel_type, path, a.testcase_command, a.working_dir, a.compile_command)}};
  json warnings = json::array();
  auto r = run_kernel_cli(ctx, a, "analyze", doc, {}, &warnings);
  if (!r.ok()) return tool_result::error("analyze failed: " + r.get_status().message());
  const json& report = r->first;
  const json& res = report.contains("results") && report["results"].is_array() && !report["results"].empty()
                        ? report["results"][0] : json::object();
  json out = analyze_output(res, r->second, a.kernel_type, warnings);
  std::string summary = strprintf("%s: correctness %s", id.c_str(), json_string(out, "correctness_state", "?").c_str());
  if (auto median = json_as_number(json_value(out, "kernel_time_median_us")))
    summary += strprintf(", median %.3f us", *median);
  summary += " (workspace " + r->second.string() + ")";
  return tool_result::ok(summary, out);
}

tool_result compare_tool(const json& arguments, tool_context& ctx) {
  const kernel_args a = kernel_args::decode(arguments);
  const auto& paths = a.kernel_paths;
  const auto& cmds = a.testcase_commands;
  if (!cmds.empty() && cmds.size() != 1 && cmds.size() != paths.size())
    return tool_result::error("testcase_commands must have one entry or one per kernel_paths entry");
  std::vector<std::string> files = paths;
  if (!a.reference_path.empty()) files.push_back(a.reference_path);
  if (std::string m = missing_file(files, "kernel file"); !m.empty()) return tool_result::error(m);
  json kernels = json::array(), configs = json::array();
  const std::string& type = a.kernel_type;
  const int base = a.baseline_index;
  if (base < 0 || base >= static_cast<int>(paths.size())) return tool_result::error("baseline_index out of range");
  for (size_t i = 0; i < paths.size(); ++i) {
    std::string id = strprintf("kernel_%zu_%s", i, fs::path(paths[i]).stem().string().c_str());
    std::string cmd = cmds.empty() ? "" : cmds.size() == 1 ? cmds[0] : cmds[i];
    kernels.push_back(kernel_entry(id, type, paths[i], cmd, a.working_dir, a.compile_command));
    configs.push_back({{"kernel_id", id}, {"kernel_type", type.empty() ? json(nullptr) : json(type)},
                       {"source_file_path", absolute_path(paths[i]).string()}, {"testcase_command", cmd},
                       {"working_dir", a.working_dir.empty() ? json(nullptr) : json(absolute_path(a.working_dir).string())},
                       {"is_baseline", static_cast<int>(i) == base}});
  }
  json warnings = json::array();
  auto r = run_kernel_cli(ctx, a, "compare", {{"kernels", kernels}}, {"--baseline", std::to_string(base)}, &warnings);
  if (!r.ok()) return tool_result::error("compare failed: " + r.get_status().message());
  const json& report = r->first;
  json res = report.contains("results") ? report["results"] : json::object();
  json out = {{"workspace", r->second.string()}, {"report_path", (r->second / "compare_report.json").string()}};
  for (const char* k : {"winner", "winner_reason", "rankings", "verdicts", "comparison_metrics", "summary", "baseline_index"})
    if (res.is_object() && res.contains(k)) out[k] = res[k];
  json rows = json::array();
  if (res.is_object() && res.contains("kernel_results"))
    for (const auto& k : res["kernel_results"]) rows.push_back(kernel_row(k));
  out["kernels"] = rows;
  out["kernel_configs"] = configs;
  out["warnings"] = warnings;
  auto w = json_as_uint(json_value(out, "winner"));
  std::string winner = w && *w < configs.size() ? json_string(configs[*w], "kernel_id") : "none";
  return tool_result::ok("compared " + std::to_string(paths.size()) + " kernels; winner: " + winner +
                             " (workspace " + r->second.string() + ")", out);
}

tool_result create_config_tool(const json& arguments, tool_context&) {
  const kernel_args a = kernel_args::decode(arguments);
  const std::string id = a.kernel_id.value_or("");
  json doc = {{"kernel", kernel_entry(id, a.kernel_type, a.kernel_path, a.testcase_command, a.working_dir, a.compile_command)}};
  std::string yaml = json_to_yaml(doc);
  json out = {{"config_content", yaml},
              {"usage", "save as kernel.yaml, then: magpie analyze -k kernel.yaml (or the analyze tool)"}};
  const std::string& target = a.output_path;
  if (!target.empty()) {
    if (auto st = write_file_atomic(target, yaml); !st.ok()) return tool_result::error(st.message());
    out["written_to"] = absolute_path(target).string();
  }
  return tool_result::ok("kernel config for " + id, out);
}

// ---- schemas: one place per tool (inputs accept Magpie's argument names) ----

json kernel_types_magpie() {
  std::vector<std::string> t = kernel_types();
  for (const char* alias : {"torch", "py"}) t.push_back(alias);
  return s_enum("kernel type (Magpie's names; torch and py mean pytorch). Default: from the file (.cu cuda, .hip hip, "
                ".py triton|pytorch, C++ by content)", t);
}

json kernel_props_common() {
  return {{"kernel_type", kernel_types_magpie()},
          {"working_dir", s_string("working directory for compile/testcase commands (relative: to the server's current directory)")},
          {"compile_command", s_string("compile command (whitespace-split, no shell)")},
          {"check_performance", with_default(s_boolean("run the timing/profiling stage"), true)},
          {"reference_path", s_string("reference implementation whose outputs the kernel must match (same type)")},
          {"seed", s_integer("run seed for trial inputs", 0)},
          {"trials", s_integer("seeded correctness trials", 1)},
          {"atol", s_number("absolute tolerance", 0)},
          {"rtol", s_number("relative tolerance", 0)},
          {"correctness_method",
           with_default(s_enum("auto: compare outputs when the harness writes them; exit_code: Magpie's mode",
                               {"auto", "outputs", "exit_code"}), "auto")},
          {"max_time_seconds", s_number("timing budget per kernel, s (default 15)", 0)},
          {"output_dir", s_string("results directory (default ./results); the workspace is created inside")},
          {"timeout_seconds", with_default(s_number("wall-clock limit for the whole run, s", 1), k_default_kernel_timeout_s)},
          // Magpie's arguments
          {"environment", with_default(s_enum("Magpie's executor: local; slurm / ray: scheduler jobs; container runs "
                                              "locally with a warning", {"local", "container", "ray", "slurm"}), "local")},
          {"performance_backend", s_enum("profiler: ncu, rocprof_compute, cupti, none; metrix is not provided (warning); "
                                         "empty: auto", {"", "ncu", "rocprof_compute", "metrix", "cupti", "none"})},
          {"correctness_backend", s_enum("testcase (magpie's checks) or accordo (not provided: outputs are compared by "
                                         "magpie, warning)", {"", "testcase", "accordo"})},
          {"accordo_kernel_name", s_string("Accordo: accepted, not used")},
          {"accordo_reference_binary", s_string("Accordo: accepted, not used")},
          {"accordo_optimized_binary", s_string("Accordo: accepted, not used")},
          {"accordo_atol", s_number("Accordo atol: applied as atol with correctness_backend accordo", 0)},
          {"accordo_rtol", s_number("Accordo rtol: applied as rtol with correctness_backend accordo", 0)},
          {"accordo_equal_nan", s_boolean("Accordo: accepted, not used (NaN positions must always match)")},
          {"accordo_timeout_seconds", s_number("Accordo timeout: applied as the correctness timeout", 0)}};
}

json merge_props(json base, std::initializer_list<std::pair<const char*, json>> extra) {
  for (const auto& [k, v] : extra) base[k] = v;
  return base;
}

json closed_object(json props, std::vector<std::string> required) {
  json j = {{"type", "object"}, {"properties", std::move(props)}, {"additionalProperties", false}};
  if (!required.empty()) j["required"] = std::move(required);
  return j;
}

/// One kernel's row (kernel_row): the report entry's states, score, errors and outcome (their
/// schemas from kernel_eval_schema), its id and median time.
json kernel_row_props() {
  const json entry = kernel::kernel_eval_schema()["properties"];
  json p = {{"kernel_id", s_string("kernel id")}};
  for (const char* k : k_row_keys) p[k] = entry[k];
  p["kernel_time_median_us"] = s_number("median kernel time, microseconds");
  return p;
}

json analyze_output_schema() {
  const json entry = kernel::kernel_eval_schema()["properties"];
  json p = kernel_row_props();
  p["workspace"] = s_string("run workspace");
  p["report_path"] = s_string("analyze_report.json");
  p["kernel_type"] = s_string("kernel type");
  for (const char* k : k_analyze_keys) p[k] = entry[k];
  p["warnings"] = s_array(s_string("warning"), "Magpie arguments accepted but not acted on");
  return closed_object(p, {"workspace", "report_path", "compiling_state", "correctness_state", "performance_state",
                           "score", "errors", "kernel_type", "warnings"});
}

json compare_output_schema() {
  json row = closed_object(kernel_row_props(), {"compiling_state", "correctness_state", "performance_state"});
  json cfg = closed_object({{"kernel_id", s_string("id")}, {"kernel_type", {{"type", {"string", "null"}}}},
                            {"source_file_path", s_string("absolute path")}, {"testcase_command", s_string("command")},
                            {"working_dir", {{"type", {"string", "null"}}}}, {"is_baseline", s_boolean("baseline")}},
                           {"kernel_id", "source_file_path", "is_baseline"});
  // winner, winner_reason, rankings, verdicts, comparison_metrics and baseline_index: the
  // compare builder's own schema (kernel/compare.h), so the tool says what reports hold.
  json p = kernel::compare_result_schema()["properties"];
  p["workspace"] = s_string("run workspace");
  p["report_path"] = s_string("compare_report.json");
  p["summary"] = s_string("comparison summary text");
  p["kernels"] = s_array(row, "per kernel");
  p["kernel_configs"] = s_array(cfg, "per kernel");
  p["warnings"] = s_array(s_string("warning"), "Magpie arguments accepted but not acted on");
  return closed_object(p, {"workspace", "report_path", "kernels", "kernel_configs", "warnings"});
}

}  // namespace

json analyze_output(const json& entry, const fs::path& workspace, const std::string& fallback_type, const json& warnings) {
  json out = {{"workspace", workspace.string()}, {"report_path", (workspace / "analyze_report.json").string()}};
  json row = kernel_row(entry);
  for (auto it = row.begin(); it != row.end(); ++it) out[it.key()] = it.value();
  out["kernel_type"] = entry.contains("extra") ? to_lower(json_string(entry["extra"], "kernel_type")) : fallback_type;
  for (const char* k : k_analyze_keys)
    if (entry.contains(k)) out[k] = entry[k];
  out["warnings"] = warnings;
  return out;
}

void add_kernel_tools(std::vector<tool_def>* out) {
  json analyze_in = closed_object(
      merge_props(kernel_props_common(),
                  {{"kernel_path", s_string("kernel source file")},
                   {"testcase_command", s_string("command that runs the kernel (whitespace-split, no shell)")},
                   {"kernel_id", s_string("kernel id (default: file stem)")}}),
      {"kernel_path"});
  out->push_back({"analyze", "Analyze a kernel",
                  "Compile a GPU kernel, prove correctness against a reference (or Magpie's exit-code mode), time it "
                  "and profile it. Runs `magpie analyze`; returns the analyze_report.json result and workspace. A "
                  "missing kernel file is a tool error.",
                  analyze_in, analyze_output_schema(), false, analyze_tool});
  json compare_in = closed_object(
      merge_props(kernel_props_common(),
                  {{"kernel_paths", s_array(s_string("kernel source"), "kernels to compare", 2)},
                   {"testcase_commands", s_array(s_string("command"), "one command, or one per kernel")},
                   {"baseline_index", with_default(s_integer("index of the baseline kernel", 0), 0)}}),
      {"kernel_paths"});
  out->push_back({"compare", "Compare kernels",
                  "Evaluate several kernels on identical inputs with a correctness gate and rank them with a "
                  "verdict and confidence interval per candidate. Runs `magpie compare`.",
                  compare_in, compare_output_schema(), false, compare_tool});
  json cfg_in = closed_object({{"kernel_id", s_string("kernel id")},
                               {"kernel_path", s_string("kernel source file")},
                               {"testcase_command", s_string("testcase command")},
                               {"kernel_type", kernel_types_magpie()},
                               {"working_dir", s_string("working directory")},
                               {"compile_command", s_string("compile command")},
                               {"output_path", s_string("also write the YAML to this file")}},
                              {"kernel_id", "kernel_path"});
  out->push_back({"create_kernel_config", "Create a kernel config",
                  "Generate a Magpie kernel YAML (kernel: id, type, source_files, working_dir, compile_command, "
                  "testcase_command) for magpie analyze -k.",
                  cfg_in,
                  closed_object({{"config_content", s_string("YAML text")}, {"usage", s_string("how to run it")},
                                 {"written_to", s_string("absolute path of the written file")}},
                                {"config_content", "usage"}),
                  false, create_config_tool});
}

}  // namespace magpie::mcp
