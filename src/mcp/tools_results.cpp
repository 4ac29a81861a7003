// Results tools: list_benchmark_results, get_benchmark_result, compare_benchmark_reports
// (workspaces on disk + the SQLite results store).
#include <algorithm>

#include "core/strings.h"
#include "core/workspace.h"
#include "core/json_schema.h"
#include "mcp/tool_schema.h"
#include "mcp/tool_util.h"
#include "serve/bench_config.h"
#include "serve/bench_config_codec.h"
#include "serve/metrics_schema.h"
#include "store/compare.h"
#include "store/compare_printer.h"
#include "store/results_store.h"
#include "trace/report_schema.h"

namespace magpie::mcp {

using namespace magpie::schema;  // the one schema library (core/json_schema.h)

/// The report of a workspace (benchmark, compare or analyze) with "mode" added; {} if none.
json read_workspace_report(const std::string& dir);

namespace {

std::string name_timestamp(const std::string& n) { return n.size() > 15 ? n.substr(n.size() - 15) : n; }

const char* report_name(const std::string& mode) {
  return mode == "benchmark" ? "benchmark_report.json" : mode == "compare" ? "compare_report.json" : "analyze_report.json";
}

json throughput_schema() { return or_null(serve::magpie_throughput_schema()); }
json latency_schema() { return or_null(serve::magpie_latency_schema()); }

/// Magpie's per-run row (list_benchmark_results / get_benchmark_result). The report may come
/// from Magpie itself: blocks not in magpie's format are left out with a warning (checked_value).
json run_row(const fs::path& ws, const json& r, json* warnings) {
  std::error_code ec;
  json top = json::array();
  if (r.contains("top_bottlenecks") && r["top_bottlenecks"].is_array())
    for (size_t i = 0; i < r["top_bottlenecks"].size() && i < 5; ++i)
      if (auto name = json_as_string(r["top_bottlenecks"][i])) top.push_back(*name);
  json errors = json::array();
  if (r.contains("errors") && r["errors"].is_array())
    for (const auto& e : r["errors"]) errors.push_back(json_as_string(e).value_or(dump_compact(e)));
  std::string where = ws.filename().string() + ": ";
  return {{"workspace", ws.string()},
          {"name", ws.filename().string()},
          {"framework", json_string(r, "framework")},
          {"model", json_string(r, "model")},
          {"timestamp", json_string(r, "timestamp", name_timestamp(ws.filename().string()))},
          {"success", json_bool(r, "success", false)},
          {"execution_time", json_as_number(json_value(r, "execution_time")) ? r["execution_time"] : json(nullptr)},
          {"throughput", checked_value(json_value(r, "throughput"), throughput_schema(), where + "throughput", warnings)},
          {"latency", checked_value(json_value(r, "latency"), latency_schema(), where + "latency", warnings)},
          {"top_bottlenecks", top},
          {"errors", errors},
          {"has_torch_trace", fs::is_directory(ws / "torch_trace", ec)},
          {"has_tracelens", fs::is_directory(ws / "tracelens", ec) || fs::is_directory(ws / "tracelens_rank0_csvs", ec)}};
}

/// A benchmark report's kernel_summary rows (serve/profiling.cpp).
json kernel_summary_schema() {
  return or_null(s_array(closed({{"name", s_string("kernel")}, {"time_ms", s_number("ms")},
                                 {"percent", s_number("% of kernel time")}, {"calls", s_integer("calls", 0)}},
                                {"name", "time_ms"}),
                         "kernels by GPU time"));
}

/// raw_result of a report another program wrote (magpie writes none): its keys with scalar or
/// list values.
json raw_result_schema() {
  const json scalar = {{"type", {"string", "number", "integer", "boolean", "null"}}};
  return {{"type", {"object", "null"}},
          {"additionalProperties", {{"type", {"string", "number", "integer", "boolean", "null", "array"}},
                                    {"items", {{"type", {"string", "number", "integer", "boolean", "null", "array"}},
                                               {"items", scalar}}}}},
          {"description", "the raw client result as its writer left it"}};
}

/// list_benchmark_results' arguments, decoded once.
struct list_args {
  std::optional<std::string> output_dir;  ///< nullopt: the server default
  std::string mode = "benchmark";  ///< benchmark | analyze | compare | all
  size_t limit = 20;
  static list_args decode(const json& a) {
    return {json_as_string(json_value(a, "output_dir")), arg_str(a, "mode", "benchmark"), static_cast<size_t>(arg_num(a, "limit", 20))};
  }
};

tool_result list_tool(const json& a, tool_context& ctx) {
  const list_args args = list_args::decode(a);
  fs::path dir = absolute_path(args.output_dir ? fs::path(*args.output_dir) : ctx.settings().default_output_dir);
  const std::string& mode = args.mode;
  const size_t limit = args.limit;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return tool_result::error("output_dir '" + dir.string() + "' does not exist");
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    for (const char* m : {"benchmark", "analyze", "compare"}) {
      if ((mode == "all" || mode == m) && starts_with(n, std::string(m) + "_") && fs::exists(e.path() / report_name(m), ec))
        found.push_back(e.path());
    }
  }
  auto stamp = [](const fs::path& p) {  // names end with _YYYYmmdd_HHMMSS[_N]: newest first by mtime
    std::error_code e2;
    return fs::last_write_time(p, e2);
  };
  std::sort(found.begin(), found.end(), [&](const fs::path& x, const fs::path& y) { return stamp(x) > stamp(y); });
  auto st = store::results_store::open(store::default_db_path(dir));
  json runs = json::array(), warnings = json::array();
  for (size_t i = 0; i < found.size() && i < limit; ++i) {
    std::string n = found[i].filename().string();
    std::string m = starts_with(n, "benchmark_") ? "benchmark" : starts_with(n, "compare_") ? "compare" : "analyze";
    auto r = read_json_file(found[i] / report_name(m));
    json row = run_row(found[i], r.ok() ? *r : json::object(), &warnings);
    row["mode"] = m;
    if (st.ok())
      if (auto reg = st->find(found[i].string()); reg.ok()) {
        row["run_id"] = reg->id;
        row["state"] = reg->state;
      }
    if (std::error_code e2; fs::exists(found[i] / k_incomplete_file, e2)) row["state"] = "interrupted";
    runs.push_back(std::move(row));
  }
  json out = {{"output_dir", dir.string()}, {"total_found", found.size()}, {"showing", runs.size()}, {"runs", runs},
              {"warnings", warnings}};
  return tool_result::ok(strprintf("%zu runs in %s (showing %zu)", found.size(), dir.c_str(), runs.size()), out);
}

/// get_benchmark_result's arguments, decoded once.
struct get_args {
  std::string workspace_dir;
  bool kernel_summary = true, raw_result = false, tracelens_files = true;  ///< include_* flags
  static get_args decode(const json& a) {
    return {arg_str(a, "workspace_dir"), arg_bool(a, "include_kernel_summary", true), arg_bool(a, "include_raw_result", false),
            arg_bool(a, "include_tracelens_files", true)};
  }
};

tool_result get_tool(const json& a, tool_context&) {
  const get_args args = get_args::decode(a);
  fs::path ws = absolute_path(args.workspace_dir);
  auto r = read_json_file(ws / "benchmark_report.json");
  if (!r.ok()) return tool_result::error(r.get_status().message());
  json warnings = json::array();
  json out = run_row(ws, *r, &warnings);
  std::string where = ws.filename().string() + ": ";
  out["config"] = checked_value(json_value(*r, "config"), or_null(serve::benchmark_config_schema()), where + "config", &warnings);
  if (args.kernel_summary && r->contains("kernel_summary"))
    out["kernel_summary"] = checked_value((*r)["kernel_summary"], kernel_summary_schema(), where + "kernel_summary", &warnings);
  if (args.raw_result && r->contains("raw_result"))
    out["raw_result"] = checked_value((*r)["raw_result"], raw_result_schema(), where + "raw_result", &warnings);
  if (r->contains("gap_analysis"))
    out["gap_analysis"] = checked_value((*r)["gap_analysis"], trace::gap_analysis_schema(), where + "gap_analysis", &warnings);
  auto summary = read_file(ws / "summary.txt");
  out["summary_text"] = summary.ok() ? *summary : "";
  std::error_code ec;
  auto list = [&](const fs::path& d, const std::string& suffix) {
    json files = json::array();
    fs::recursive_directory_iterator it(d, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec))
      if (it->is_regular_file(ec) && ends_with(it->path().filename().string(), suffix)) files.push_back(it->path().string());
    return files;
  };
  out["torch_trace_files"] = fs::is_directory(ws / "torch_trace", ec) ? list(ws / "torch_trace", ".json.gz") : json::array();
  out["warnings"] = warnings;
  if (args.tracelens_files)
    out["tracelens_files"] = {{"tracelens", fs::is_directory(ws / "tracelens", ec) ? list(ws / "tracelens", ".csv") : json::array()}};
  return tool_result::ok(ws.filename().string() + (json_bool(*r, "success", false) ? ": success" : ": failed"), out);
}

/// compare_benchmark_reports' arguments, decoded once.
struct compare_reports_args {
  std::vector<std::string> workspace_dirs, labels;
  std::string db_path, output_dir;  ///< "" = beside the first workspace; the server default
  double alpha = 0.05;
  bool use_replicates = true;
  bool export_format = false;       ///< given (accepted, not honoured: a warning says so)
  static compare_reports_args decode(const json& a) {
    return {arg_strings(a, "workspace_dirs"), arg_strings(a, "labels"), arg_str(a, "db_path"), arg_str(a, "output_dir"),
            arg_num(a, "alpha", 0.05), arg_bool(a, "use_replicates", true), a.contains("export_format")};
  }
};

tool_result compare_reports_tool(const json& a, tool_context& ctx) {
  const compare_reports_args args = compare_reports_args::decode(a);
  const auto& dirs = args.workspace_dirs;
  const auto& labels = args.labels;
  fs::path db = args.db_path.empty() ? store::default_db_path(absolute_path(dirs[0]).parent_path()) : fs::path(args.db_path);
  json summaries = json::array(), notes = json::array();
  for (size_t i = 0; i < dirs.size(); ++i) {
    auto id = store::register_workspace(db, dirs[i]);
    if (!id.ok()) return tool_result::error(id.get_status().message());
    auto r = read_workspace_report(dirs[i]);
    json row = {{"workspace", absolute_path(dirs[i]).string()}, {"label", i < labels.size() ? labels[i] : fs::path(dirs[i]).filename().string()},
                {"run_id", *id}};
    for (const char* k : {"framework", "model", "mode"})
      if (auto v = json_as_string(json_value(r, k))) row[k] = *v;
    std::string where = fs::path(dirs[i]).filename().string() + ": ";
    if (r.contains("throughput")) row["throughput"] = checked_value(r["throughput"], throughput_schema(), where + "throughput", &notes);
    if (r.contains("latency")) row["latency"] = checked_value(r["latency"], latency_schema(), where + "latency", &notes);
    summaries.push_back(std::move(row));
  }
  auto st = store::results_store::open(db);
  if (!st.ok()) return tool_result::error(st.get_status().message());
  store::compare_options o;
  o.alpha = args.alpha;
  o.expand_replicates = args.use_replicates;
  json comparisons = json::array();
  for (size_t i = 1; i < dirs.size(); ++i) {
    auto c = store::compare_runs(*st, {dirs[0]}, {dirs[i]}, o);
    if (!c.ok()) return tool_result::error(c.get_status().message());
    json j = store::comparison_to_json(*c, o);
    j["baseline"] = summaries[0]["label"];
    j["candidate"] = summaries[i]["label"];
    comparisons.push_back(std::move(j));
  }
  json out = {{"success", true}, {"db_path", absolute_path(db).string()}, {"run_summaries", summaries},
              {"comparisons", comparisons}, {"errors", json::array()}};
  if (args.export_format)
    notes.push_back("export_format is accepted but the comparison is written as JSON (no TraceLens CSV/Excel comparison)");
  if (!notes.empty()) out["warnings"] = notes;
  auto outdir = output_dir_path(args.output_dir, ctx);
  if (outdir.ok()) {
    fs::path f = *outdir / ("comparison_" + timestamp_now() + ".json");
    if (write_json_file(f, out).ok()) out["output_files"] = json::array({f.string()});
  }
  return tool_result::ok(strprintf("compared %zu runs against %s", dirs.size() - 1, dirs[0].c_str()), out);
}

}  // namespace

json read_workspace_report(const std::string& dir) {
  for (const char* m : {"benchmark", "compare", "analyze"}) {
    auto r = read_json_file(fs::path(dir) / report_name(m));
    if (r.ok() && r->is_object()) {
      (*r)["mode"] = m;
      return *r;
    }
  }
  return json::object();
}

namespace {

json nullable(const char* type, const std::string& d) { return {{"type", {type, "null"}}, {"description", d}}; }

/// run_row(): Magpie's per-run keys.
json run_row_props() {
  return {{"workspace", s_string("workspace directory")}, {"name", s_string("workspace name")},
          {"framework", s_string("framework (benchmark runs)")}, {"model", s_string("model")},
          {"timestamp", s_string("YYYYmmdd_HHMMSS or the report's")}, {"success", s_boolean("run succeeded")},
          {"execution_time", nullable("number", "seconds")}, {"throughput", throughput_schema()},
          {"latency", latency_schema()},
          {"top_bottlenecks", s_array(s_string("kernel"), "up to 5")}, {"errors", s_array(s_string("error"), "errors")},
          {"has_torch_trace", s_boolean("torch_trace/ exists")}, {"has_tracelens", s_boolean("TraceLens output exists")}};
}

json list_output_schema() {
  json row = run_row_props();
  row["mode"] = s_enum("run kind", {"benchmark", "analyze", "compare"});
  row["run_id"] = s_integer("results-store id", 0);
  row["state"] = s_enum("complete, or interrupted (the workspace is marked INCOMPLETE)", {"complete", "interrupted"});
  return closed({{"output_dir", s_string("directory searched")}, {"total_found", s_integer("runs found", 0)},
                 {"showing", s_integer("runs listed", 0)},
                 {"runs", s_array(closed(row, {"workspace", "name", "success", "mode"}), "newest first")},
                 {"warnings", s_array(s_string("warning"), "report blocks left out (not in magpie's format)")}},
                {"output_dir", "total_found", "showing", "runs"});
}

json get_output_schema() {
  json p = run_row_props();
  p["config"] = or_null(serve::benchmark_config_schema());
  p["kernel_summary"] = kernel_summary_schema();
  p["raw_result"] = raw_result_schema();
  p["gap_analysis"] = trace::gap_analysis_schema();
  p["warnings"] = s_array(s_string("warning"), "report blocks left out (not in magpie's format)");
  p["summary_text"] = s_string("summary.txt");
  p["torch_trace_files"] = s_array(s_string("file"), "trace files");
  p["tracelens_files"] = closed({{"tracelens", s_array(s_string("csv"), "TraceLens CSVs")}}, {"tracelens"});
  return closed(p, {"workspace", "success", "summary_text", "torch_trace_files"});
}

/// store::comparison_to_json plus the labels the tool adds.
json comparison_schema() {
  json c = store::comparison_schema();
  c["properties"]["baseline"] = s_string("baseline label");
  c["properties"]["candidate"] = s_string("candidate label");
  return c;
}

json compare_reports_output_schema() {
  json summary = {{"type", "object"},
                  {"properties", {{"workspace", s_string("dir")}, {"label", s_string("label")}, {"run_id", s_integer("id", 0)},
                                  {"framework", s_string("framework")}, {"model", s_string("model")},
                                  {"throughput", throughput_schema()}, {"latency", latency_schema()},
                                  {"mode", s_string("run kind")}}},
                  {"required", {"workspace", "label", "run_id"}},
                  {"additionalProperties", false}};
  return closed({{"success", s_boolean("ok")}, {"db_path", s_string("results store")},
                 {"run_summaries", s_array(summary, "per run")},
                 {"comparisons", s_array(comparison_schema(), "vs baseline")},
                 {"errors", s_array(s_string("error"), "errors")}, {"output_files", s_array(s_string("file"), "written")},
                 {"warnings", s_array(s_string("warning"), "Magpie arguments accepted but not acted on")}},
                {"success", "db_path", "run_summaries", "comparisons", "errors"});
}

}  // namespace

void add_results_tools(std::vector<tool_def>* out) {
  out->push_back({"list_benchmark_results", "List run results",
                  "Run workspaces in an output directory, newest first (benchmark runs by default; mode=all adds "
                  "analyze and compare), with throughput, latency, bottlenecks and the results-store run id.",
                  closed({{"output_dir", with_default(s_string("results directory"), "./results")},
                          {"limit", with_default(s_integer("rows", 1), 20)},
                          {"mode", with_default(s_enum("run kind", {"benchmark", "analyze", "compare", "all"}), "benchmark")}},
                         {}),
                  list_output_schema(), true, list_tool});
  out->push_back({"get_benchmark_result", "Get a benchmark result",
                  "One benchmark workspace: config, throughput, latency, bottlenecks, kernel summary, summary.txt, "
                  "trace and TraceLens file lists.",
                  closed({{"workspace_dir", s_string("benchmark workspace")},
                          {"include_kernel_summary", with_default(s_boolean("kernel summary"), true)},
                          {"include_raw_result", with_default(s_boolean("raw client result"), false)},
                          {"include_tracelens_files", with_default(s_boolean("TraceLens CSV list"), true)}},
                         {"workspace_dir"}),
                  get_output_schema(), true, get_tool});
  out->push_back({"compare_benchmark_reports", "Compare run results",
                  "Compare runs (benchmark, or analyze/compare) metric by metric against the first: direction, ratio "
                  "and whether the difference is beyond run-to-run noise (decided only from repeated runs of the same "
                  "configuration registered in the results store; otherwise 'insufficient_data').",
                  closed({{"workspace_dirs", s_array(s_string("workspace"), "baseline first", 2)},
                          {"labels", s_array(s_string("label"), "display labels")},
                          {"output_dir", s_string("where the comparison JSON is written (default ./results)")},
                          {"db_path", s_string("results database (default: next to the first workspace)")},
                          {"alpha", with_default(s_number("significance level", 0.0001, 0.5), 0.05)},
                          {"use_replicates", with_default(s_boolean("include registered replicates"), true)},
                          {"export_format", s_enum("Magpie's TraceLens comparison format: accepted, JSON is written", {"csv", "excel"})}},
                         {"workspace_dirs"}),
                  compare_reports_output_schema(), false, compare_reports_tool});
}

}  // namespace magpie::mcp
