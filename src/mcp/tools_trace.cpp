// Trace tools: gap_analysis and trace_report (children running `magpie benchmark --trace-dir`
// and `magpie trace report`), find_kernel_sources and discover_kernels (in-process).
#include <algorithm>
#include <set>

#include "core/csv.h"
#include "core/strings.h"
#include "core/json_schema.h"
#include "mcp/tool_util.h"
#include "mcp/trace_kernels.h"
#include "source/kernel_sources.h"
#include "source/repo_index.h"
#include "source/report_printer.h"
#include "trace/report_schema.h"

namespace magpie::mcp {

using namespace magpie::schema;  // the one schema library (core/json_schema.h)
namespace {

/// gap_analysis.csv rows → Magpie's top_kernels objects (extra columns kept by name).
json csv_top_kernels(const std::string& text) {
  json out = json::array();
  auto rows = parse_csv(text, true);
  if (!rows.ok() || rows->empty()) return out;
  const auto& h = (*rows)[0];
  for (size_t r = 1; r < rows->size(); ++r) {
    const auto& row = (*rows)[r];
    json k = json::object();
    for (size_t c = 0; c < h.size() && c < row.size(); ++c) {
      static const std::map<std::string, std::string> k_names = {
          {"Name", "name"}, {"Calls", "calls"}, {"Self CUDA total (us)", "self_cuda_total_us"},
          {"Avg time (us)", "avg_time_us"}, {"% Total", "pct_total"}, {"Input Shapes", "input_shapes"}};
      auto it = k_names.find(h[c]);
      std::string key = it == k_names.end() ? h[c] : it->second;
      auto num = parse_double(row[c]);
      k[key] = (num && key != "name" && key != "input_shapes") ? json(*num) : json(row[c]);
    }
    out.push_back(std::move(k));
  }
  return out;
}

/// gap_analysis' arguments, decoded once.
struct gap_args {
  std::string output_dir, trace_dir;
  int top_k = 20;
  double start_pct = 0, end_pct = 100, min_duration_us = 0;
  std::vector<std::string> categories, ignore_categories, kernel_source_repos;
  bool clamped_traces = false, find_kernel_sources = false;
  double timeout_s = 1800;
  static gap_args decode(const json& a) {
    gap_args r;
    r.output_dir = arg_str(a, "output_dir");
    r.trace_dir = arg_str(a, "trace_dir");
    r.top_k = static_cast<int>(arg_num(a, "top_k", 20));
    r.start_pct = arg_num(a, "start_pct", 0);
    r.end_pct = arg_num(a, "end_pct", 100);
    r.min_duration_us = arg_num(a, "min_duration_us", 0);
    r.categories = arg_strings(a, "categories");
    r.ignore_categories = arg_strings(a, "ignore_categories");
    r.clamped_traces = arg_bool(a, "generate_clamped_traces", false);
    r.find_kernel_sources = arg_bool(a, "find_kernel_sources", false);
    r.kernel_source_repos = arg_strings(a, "kernel_source_repos");
    r.timeout_s = arg_num(a, "timeout_seconds", 1800);
    return r;
  }
};

tool_result gap_tool(const json& arguments, tool_context& ctx) {
  const gap_args a = gap_args::decode(arguments);
  auto out = output_dir_path(a.output_dir, ctx);
  if (!out.ok()) return tool_result::error(out.get_status().message());
  std::vector<std::string> argv = {"benchmark", "--trace-dir", a.trace_dir, "--output-dir", out->string(),
                                   "--top-k", std::to_string(a.top_k),
                                   "--start-pct", strprintf("%.17g", a.start_pct),
                                   "--end-pct", strprintf("%.17g", a.end_pct),
                                   "--min-duration-us", strprintf("%.17g", a.min_duration_us)};
  for (const auto& [flag, v] : {std::pair<const char*, const std::vector<std::string>*>{"--categories", &a.categories},
                                {"--ignore-categories", &a.ignore_categories}}) {
    if (v->empty()) continue;
    argv.push_back(flag);
    argv.insert(argv.end(), v->begin(), v->end());
  }
  if (a.clamped_traces) argv.push_back("--clamped-traces");
  if (a.find_kernel_sources) {
    argv.push_back("--find-kernel-sources");
    if (!a.kernel_source_repos.empty()) {
      argv.push_back("--kernel-source-repos");
      argv.insert(argv.end(), a.kernel_source_repos.begin(), a.kernel_source_repos.end());
    }
  }
  auto run = run_magpie(ctx, argv, a.timeout_s);
  if (!run.ok()) return tool_result::error("gap_analysis failed: " + run.get_status().message());
  fs::path dir = *out / "gap_analysis", csv = dir / "gap_analysis.csv";
  auto text = read_file(csv);
  if (!run->outcome.result.success() || !text.ok())
    return tool_result::error("gap_analysis failed (" + run->outcome.result.describe() + "): " +
                              std::string(trim(run->outcome.result.output_tail(1500))));
  json r = {{"output_dir", dir.string()}, {"csv_file", csv.string()}, {"top_kernels", csv_top_kernels(*text)}};
  json ranks = json::array(), clamped = json::array();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    if (starts_with(n, "gap_analysis_rank")) ranks.push_back(e.path().string());
    if (contains(n, "_clamped_")) clamped.push_back(e.path().string());
  }
  r["rank_csv_files"] = ranks;
  r["num_ranks"] = std::max<size_t>(1, ranks.size());
  if (!clamped.empty()) r["clamped_trace_files"] = clamped;
  r["console"] = join(run->stdout_lines, "\n");
  return tool_result::ok(strprintf("gap analysis: %zu kernels in %s", r["top_kernels"].size(), csv.c_str()), r);
}

/// trace_report's arguments, decoded once.
struct trace_report_args {
  std::string output_dir, trace_file, gpu;
  std::optional<int> top_k;  ///< nullopt: the CLI's default
  double timeout_s = 1800;
  static trace_report_args decode(const json& a) {
    return {arg_str(a, "output_dir"), arg_str(a, "trace_file"), arg_str(a, "gpu"),
            a.contains("top_k") ? std::optional<int>(static_cast<int>(arg_num(a, "top_k", 50))) : std::nullopt,
            arg_num(a, "timeout_seconds", 1800)};
  }
};

tool_result trace_report_tool(const json& arguments, tool_context& ctx) {
  const trace_report_args a = trace_report_args::decode(arguments);
  auto out = output_dir_path(a.output_dir, ctx);
  if (!out.ok()) return tool_result::error(out.get_status().message());
  fs::path dir = *out / ("trace_report_" + sanitize_label(fs::path(a.trace_file).stem().string()));
  std::vector<std::string> argv = {"trace", "report", a.trace_file, "--output-dir", dir.string()};
  if (!a.gpu.empty()) argv.insert(argv.end(), {"--gpu", a.gpu});
  if (a.top_k) argv.insert(argv.end(), {"--top-k", std::to_string(*a.top_k)});
  auto run = run_magpie(ctx, argv, a.timeout_s);
  if (!run.ok()) return tool_result::error("trace_report failed: " + run.get_status().message());
  auto report = read_json_file(dir / "report.json");
  if (!run->outcome.result.success() || !report.ok())
    return tool_result::error("trace_report failed (" + run->outcome.result.describe() + "): " +
                              std::string(trim(run->outcome.result.output_tail(1500))));
  json files = json::array();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) files.push_back(e.path().string());
  json r = {{"output_dir", dir.string()}, {"files", files}, {"report", *report}};
  return tool_result::ok("trace report written to " + dir.string(), r);
}

/// find_kernel_sources' arguments, decoded once.
struct sources_args {
  std::vector<std::string> kernel_names, trace_files, kernel_source_repos;
  size_t top_k = 20;
  static sources_args decode(const json& a) {
    return {arg_strings(a, "kernel_names"), arg_strings(a, "trace_files"), arg_strings(a, "kernel_source_repos"),
            static_cast<size_t>(arg_num(a, "top_k", 20))};
  }
};

tool_result sources_tool(const json& arguments, tool_context& ctx) {
  const sources_args a = sources_args::decode(arguments);
  std::vector<std::string> names = a.kernel_names;
  std::vector<source::kernel_stat> stats;
  const auto& traces = a.trace_files;
  if (!traces.empty()) {
    trace_kernel_options o;
    o.top_k = a.top_k;
    std::vector<fs::path> in(traces.begin(), traces.end());
    std::vector<std::string> warnings;
    ctx.progress(1, 3, "reading traces");
    auto s = collect_trace_kernels(in, o, &warnings);
    if (!s.ok()) return tool_result::error(s.get_status().message());
    stats = std::move(*s);
    for (const auto& k : stats) names.push_back(k.name);
  }
  if (names.empty()) return tool_result::error("give kernel_names or trace_files");
  if (!stats.empty() && names.size() != stats.size()) return tool_result::error("give kernel_names or trace_files, not both");
  std::vector<fs::path> roots;
  for (const auto& r : a.kernel_source_repos) roots.emplace_back(r);
  ctx.progress(2, 3, "indexing repositories");
  auto infos = source::find_kernel_sources(names, roots);
  if (!infos.ok()) return tool_result::error(infos.get_status().message());
  json r = source::kernel_sources_report(*infos, stats, roots);
  const json s = json_value(r, "summary");
  auto count = [&](const char* k) { return static_cast<long long>(json_int(s, k, 0)); };
  return tool_result::ok(strprintf("%lld kernels: %lld resolved, %lld candidate, %lld unresolved, %lld unsupported",
                                   count("total"), count("resolved"), count("candidate"), count("unresolved"),
                                   count("unsupported")),
                         r);
}

/// Executables named like `stem` under build/bin/out/results/cmake-build-* of `root`.
json possible_binaries(const fs::path& root, const std::string& stem) {
  json out = json::array();
  std::error_code ec;
  for (const auto& top : fs::directory_iterator(root, ec)) {
    std::string n = top.path().filename().string();
    if (!top.is_directory(ec) || !(n == "build" || n == "bin" || n == "out" || n == "results" || starts_with(n, "cmake-build-")))
      continue;
    fs::recursive_directory_iterator it(top.path(), fs::directory_options::skip_permission_denied, ec), end;
    for (int seen = 0; it != end && seen < 20000 && out.size() < 5; it.increment(ec), ++seen) {
      if (ec) break;
      if (it->is_regular_file(ec) && it->path().stem() == stem && ::access(it->path().c_str(), X_OK) == 0)
        out.push_back(it->path().string());
    }
  }
  return out;
}

/// discover_kernels' arguments, decoded once.
struct discover_args {
  std::string project_path, kernel_type = "all";
  bool include_tests = true, include_examples = true;
  static discover_args decode(const json& a) {
    return {arg_str(a, "project_path"), arg_str(a, "kernel_type", "all"), arg_bool(a, "include_tests", true),
            arg_bool(a, "include_examples", true)};
  }
};

tool_result discover_tool(const json& arguments, tool_context& ctx) {
  const discover_args a = discover_args::decode(arguments);
  fs::path root = absolute_path(a.project_path);
  const std::string& type = a.kernel_type;
  const bool tests = a.include_tests, examples = a.include_examples;
  ctx.progress(1, 2, "indexing " + root.string());
  auto idx = source::repo_index::build({root});
  if (!idx.ok()) return tool_result::error(idx.get_status().message());
  json kernels = json::array();
  std::set<std::string> seen;
  size_t total = 0;
  for (const auto& d : idx->definitions()) {
    std::string lang = d.language == "triton" ? "triton" : d.language == "hip" ? "hip" : "cuda";
    if (d.language == "cpp") lang = "hip_or_cuda";
    if (type != "all" && lang != type && !(lang == "hip_or_cuda" && (type == "hip" || type == "cuda"))) continue;
    std::string rel = d.rel_path.generic_string();
    bool is_test = contains(to_lower(rel), "test"), is_example = contains(to_lower(rel), "example");
    if ((is_test && !tests) || (is_example && !examples) || !d.is_definition) continue;
    if (!seen.insert(rel + ":" + d.symbol).second) continue;
    ++total;
    if (kernels.size() >= 50) continue;
    std::string ktype = lang == "hip_or_cuda" ? (type == "all" ? "cuda" : type) : lang;
    fs::path file = root / d.rel_path;
    json cfg = {{"kernel_path", file.string()}, {"kernel_type", ktype}, {"working_dir", file.parent_path().string()}};
    json bins = possible_binaries(root, file.stem().string());
    if (!bins.empty()) cfg["testcase_command"] = bins[0];
    kernels.push_back({{"source_file", file.string()}, {"line", d.line}, {"name", d.symbol}, {"language", d.language},
                       {"is_test", is_test}, {"is_example", is_example}, {"possible_binaries", bins},
                       {"suggested_config", cfg}});
  }
  json r = {{"project_path", root.string()}, {"kernel_type", type}, {"total_found", total}, {"kernels", kernels}};
  return tool_result::ok(strprintf("%zu kernels found in %s", total, root.c_str()), r);
}

json gap_row_schema() {
  // Extra CSV columns (the 15 kernel-source columns of find_kernel_sources) keep their names.
  return {{"type", "object"},
          {"properties", {{"name", s_string("kernel")}, {"calls", s_number("calls", 0)},
                          {"self_cuda_total_us", s_number("us", 0)}, {"avg_time_us", s_number("us", 0)},
                          {"pct_total", s_number("% of total", 0)}, {"input_shapes", s_string("shapes")}}},
          {"additionalProperties", {{"type", {"string", "number"}}, {"description", "a kernel-source column"}}},
          {"required", {"name"}},
          {"description", "one row of gap_analysis.csv"}};
}

json discovered_schema() {
  json cfg = closed({{"kernel_path", s_string("file")}, {"kernel_type", s_string("type")}, {"working_dir", s_string("dir")},
                     {"testcase_command", s_string("binary")}},
                    {"kernel_path", "kernel_type", "working_dir"});
  return closed({{"source_file", s_string("file")}, {"line", s_integer("line", 0)}, {"name", s_string("kernel")},
                 {"language", s_string("cuda | hip | triton | cpp")}, {"is_test", s_boolean("under a test path")},
                 {"is_example", s_boolean("under an example path")},
                 {"possible_binaries", s_array(s_string("file"), "up to 5")}, {"suggested_config", cfg}},
                {"source_file", "line", "name", "language", "is_test", "is_example", "possible_binaries", "suggested_config"});
}

}  // namespace

void add_trace_tools(std::vector<tool_def>* out) {
  json cats = s_array(s_string("category substring"), "event category substrings (case-insensitive)");
  out->push_back(
      {"gap_analysis", "Gap analysis of traces",
       "Aggregate GPU kernel time from PyTorch-profiler traces (multi-rank) over a time window: top kernels by "
       "self time with calls, averages, % of total and input shapes; optionally map them to source. Runs "
       "`magpie benchmark --trace-dir`.",
       closed({{"trace_dir", s_string("directory with *.pt.trace.json(.gz) files (or a benchmark workspace)")},
               {"start_pct", with_default(s_number("window start, % of trace span", 0, 100), 0)},
               {"end_pct", with_default(s_number("window end, % of trace span", 0, 100), 100)},
               {"top_k", with_default(s_integer("kernels kept", 1), 20)},
               {"min_duration_us", with_default(s_number("drop shorter events, us", 0), 0)},
               {"categories", or_null(cats)}, {"ignore_categories", or_null(cats)},
               {"output_dir", or_null(s_string("results directory (gap_analysis/ is written inside)"))},
               {"generate_clamped_traces", with_default(s_boolean("write clamped traces"), false)},
               {"find_kernel_sources", with_default(s_boolean("append the 15 kernel-source columns"), false)},
               {"kernel_source_repos", s_array(s_string("dir"), "repository roots to search")},
               {"timeout_seconds", with_default(s_number("limit, s", 1), 1800)}},
              {"trace_dir"}),
       closed({{"output_dir", s_string("gap_analysis directory")}, {"csv_file", s_string("gap_analysis.csv")},
               {"top_kernels", s_array(gap_row_schema(), "rows of gap_analysis.csv, Magpie's keys")},
               {"rank_csv_files", s_array(s_string("file"), "gap_analysis_rank<N>.csv")},
               {"num_ranks", s_integer("ranks", 1)},
               {"clamped_trace_files", s_array(s_string("file"), "clamped traces (generate_clamped_traces)")},
               {"console", s_string("the CLI's table")}},
              {"output_dir", "csv_file", "top_kernels", "rank_csv_files", "num_ranks", "console"}),
       false, gap_tool});
  out->push_back(
      {"trace_report", "Trace report",
       "Single-trace report: GPU timeline, kernel and op tables with perf models and roofline, HTML. Runs "
       "`magpie trace report`.",
       closed({{"trace_file", s_string("trace file (.json / .json.gz)")},
               {"output_dir", s_string("results directory")},
               {"gpu", s_string("GPU spec name for the roofline (e.g. H200)")},
               {"top_k", s_integer("rows in HTML tables", 1)},
               {"timeout_seconds", with_default(s_number("limit, s", 1), 1800)}},
              {"trace_file"}),
       closed({{"output_dir", s_string("report directory")}, {"files", s_array(s_string("file"), "files written")},
               {"report", trace::trace_report_schema()}},
              {"output_dir", "files", "report"}),
       false, trace_report_tool});
  out->push_back(
      {"find_kernel_sources", "Map kernels to source",
       "Map kernel names (or the top kernels of traces) to the file:line defining them in the given repository "
       "roots: Magpie's 15 columns (kind, category, source_file, test_file, baseline/triton references, "
       "source_resolution, source_error …) plus confidence. Fail-closed: ambiguous names stay unresolved; a "
       "single match below confidence 0.7 is a 'candidate', not 'resolved'. "
       "Nothing is cloned.",
       closed({{"kernel_names", s_array(s_string("kernel name as in a trace"), "names to map")},
               {"trace_files", s_array(s_string("trace file or directory"), "traces whose kernels are mapped")},
               {"top_k", with_default(s_integer("trace input: kernels mapped (0 = all)", 0), 20)},
               {"kernel_source_repos", s_array(s_string("dir"), "repository roots to index")}},
              {}),
       source::kernel_sources_report_schema(),
       true, sources_tool});
  out->push_back(
      {"discover_kernels", "Discover kernels",
       "Find GPU kernels in a project: CUDA/HIP __global__ functions and Triton @triton.jit functions, with "
       "line numbers, possible binaries and a suggested analyze config (at most 50 listed).",
       closed({{"project_path", s_string("project root")},
               {"kernel_type", with_default(s_enum("filter", {"hip", "cuda", "triton", "all"}), "all")},
               {"include_tests", with_default(s_boolean("include paths containing 'test'"), true)},
               {"include_examples", with_default(s_boolean("include paths containing 'example'"), true)}},
              {"project_path"}),
       closed({{"project_path", s_string("root searched")}, {"kernel_type", s_string("filter")},
               {"total_found", s_integer("count", 0)}, {"kernels", s_array(discovered_schema(), "at most 50")}},
              {"project_path", "kernel_type", "total_found", "kernels"}),
       true, discover_tool});
}

}  // namespace magpie::mcp
