// Steps trace_analysis, choose_kernel and compare: magpie's own subcommands run as children
// (trace stages / report, gap analysis with kernel sources, trace sources, compare), their
// outputs read back, and the decisions of decide.h applied.
#include <algorithm>

#include "core/csv.h"
#include "core/log.h"
#include "core/strings.h"
#include "optimize/decide_codec.h"
#include "optimize/decide_printer.h"
#include "optimize/loop_run.h"

namespace magpie::optimize {

namespace {

json json_or_error(const command_result& r) {
  if (trim(r.out).empty()) return {{"error", strprintf("no output (rc %d): %s", r.rc, tail_of(r, 400).c_str())}};
  auto j = parse_json(r.out, "output");
  if (!j.ok()) return {{"error", strprintf("unparsable JSON (rc %d): %s", r.rc, j.get_status().message().c_str())}};
  return *j;
}

std::vector<std::string> repo_args(const optimize_config& cfg) {
  std::vector<std::string> a = {"--kernel-source-repos"};
  for (const auto& r : cfg.source_repos) a.push_back(r.string());
  return a;
}

json stage_rows(const std::string& path, size_t n) {
  json rows = json::array();
  auto text = read_file(path);
  if (!text.ok()) return rows;
  auto t = parse_csv(*text, true);
  if (!t.ok() || t->size() < 2) return rows;
  const auto& head = t->front();
  std::vector<std::vector<std::string>> body(t->begin() + 1, t->end());
  auto col = std::find(head.begin(), head.end(), "kernel_time_ms_sum") - head.begin();
  if (static_cast<size_t>(col) < head.size())
    std::stable_sort(body.begin(), body.end(), [&](const auto& a, const auto& b) {
      auto va = static_cast<size_t>(col) < a.size() ? parse_double(a[col]) : std::nullopt;
      auto vb = static_cast<size_t>(col) < b.size() ? parse_double(b[col]) : std::nullopt;
      return va.value_or(0) > vb.value_or(0);
    });
  static const std::vector<std::string> keep = {"name", "kernel_name", "op_name", "category", "kernel_time_ms_sum", "time_pct",
                                                "TFLOPS/s_mean", "TB/s_mean"};
  for (size_t i = 0; i < body.size() && i < n; ++i) {
    json r = json::object();
    for (size_t c = 0; c < head.size() && c < body[i].size(); ++c)
      if (std::find(keep.begin(), keep.end(), head[c]) != keep.end() || contains(head[c], "roofline")) r[head[c]] = body[i][c];
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

json analysis_summary(const json& rep, const json& st, const json& src, const fs::path& gap_csv) {
  json out = {{"gap_csv", gap_csv.string()}};
  const json a = rep.is_object() && rep.contains("analysis") ? rep["analysis"] : json::object();
  out["gpu_spec"] = rep.is_object() && rep.contains("gpu_spec_choice") ? rep["gpu_spec_choice"] : json(nullptr);
  out["gpu_timeline"] = a.contains("gpu_timeline") ? a["gpu_timeline"] : json(nullptr);
  json kernels = json::array(), ops = json::array();
  if (a.contains("kernels") && a["kernels"].is_array())
    for (size_t i = 0; i < a["kernels"].size() && i < 10; ++i) {
      const json& k = a["kernels"][i];
      json roof = k.contains("roofline") && k["roofline"].is_object() ? k["roofline"] : json::object();
      kernels.push_back({{"name", json_string(k, "name").substr(0, 120)}, {"calls", k.value("calls", json(nullptr))},
                         {"total_us", k.value("total_us", json(nullptr))}, {"category", k.value("category", json(nullptr))},
                         {"bound", roof.value("bound", json(nullptr))}, {"pct_roofline", k.value("pct_roofline", json(nullptr))}});
    }
  if (a.contains("ops") && a["ops"].is_array())
    for (size_t i = 0; i < a["ops"].size() && i < 10; ++i) {
      const json& o = a["ops"][i];
      json roof = o.contains("roofline") && o["roofline"].is_object() ? o["roofline"] : json::object();
      ops.push_back({{"name", json_string(o, "name").substr(0, 120)}, {"category", o.value("category", json(nullptr))},
                     {"kernel_time_us_sum", o.value("kernel_time_us_sum", o.value("kernel_us", json(nullptr)))},
                     {"bound", roof.value("bound", json(nullptr))}, {"pct_roofline_mean", o.value("pct_roofline_mean", json(nullptr))}});
    }
  out["top_kernels"] = kernels;
  out["top_ops"] = ops;
  if (rep.is_object() && rep.contains("error")) out["report_error"] = rep["error"];
  json stages = json::object();
  if (st.is_object() && st.contains("stage_results") && st["stage_results"].is_object())
    for (auto it = st["stage_results"].begin(); it != st["stage_results"].end(); ++it) {
      const json& r = it.value();
      json pick = r.contains("phase_pick") && r["phase_pick"].is_object() ? r["phase_pick"] : json::object();
      std::string csv = json_string(r, "simple_summary_file");
      stages[it.key()] = {{"step", pick.value("step_name", json(nullptr))}, {"why", pick.value("selection_reason", json(nullptr))},
                          {"error", r.value("error", json(nullptr))}, {"roofline_csv", csv}, {"top", stage_rows(csv, 5)}};
    }
  out["stages"] = stages;
  out["stages_errors"] = st.is_object() && st.contains("errors") ? st["errors"] : json::array();
  if (st.is_object() && st.contains("error")) out["stages_errors"].push_back(st["error"]);
  out["sources_summary"] = src.is_object() && src.contains("error") ? json{{"error", src["error"]}}
                                                                    : src.value("summary", json(nullptr));
  return out;
}

status loop_run::step_trace_analysis() {
  if (!m_report.contains("profile")) return error(status_code::failed_precondition, "step_failed: no profiled run in the report");
  fs::path trace = json_string(m_report["profile"], "trace");
  fs::path dir = m_opts.workspace / "analysis";
  fs::path tdir = dir / "torch_trace";
  MAGPIE_RETURN_IF_ERROR(make_dirs(tdir));
  std::error_code ec;
  fs::path local = tdir / trace.filename();
  if (!fs::exists(local, ec)) fs::create_symlink(absolute_path(trace), local, ec);
  const std::string exe = m_opts.self_exe.string();
  const auto& cl = m_cfg.workload.bench.client;
  std::string isl = std::to_string(cl.random_input_len > 0 ? cl.random_input_len : m_cfg.workload.bench.env_int("ISL", 1024));
  std::string osl = std::to_string(cl.random_output_len > 0 ? cl.random_output_len : m_cfg.workload.bench.env_int("OSL", 512));
  auto stages = m_cmds.run("trace_stages", {exe, "trace", "stages", trace.string(), "--stages", "decode", "prefill", "--isl", isl,
                                            "--osl", osl, "--conc", std::to_string(m_cfg.workload.concurrency()), "-o",
                                            (dir / "tracelens").string(), "--json"}, {}, {}, 600);
  auto report = m_cmds.run("trace_report", {exe, "trace", "report", trace.string(), "-o", (dir / "report").string(), "--json"}, {}, {}, 600);
  json window = {m_cfg.gap.start_pct, m_cfg.gap.end_pct};
  bool widened = false;
  command_result gap;
  for (int attempt = 0; attempt < 2; ++attempt) {
    double lo = attempt ? 0 : m_cfg.gap.start_pct, hi = attempt ? 100 : m_cfg.gap.end_pct;
    std::vector<std::string> argv = {exe, "benchmark", "--trace-dir", tdir.string(), "--top-k", std::to_string(m_cfg.gap.top_k),
                                     "--start-pct", strprintf("%g", lo), "--end-pct", strprintf("%g", hi), "--find-kernel-sources"};
    for (const auto& a : repo_args(m_cfg)) argv.push_back(a);
    gap = m_cmds.run(attempt ? "gap_analysis_full" : "gap_analysis", argv, dir, {}, 600);
    if (gap.rc == 0 || !interrupted().empty()) break;
    // A window of a percentage of the trace span can fall into an idle stretch: widen it, and say so.
    MAGPIE_LOG_WARN("no kernels in the %g-%g%% window; gap analysis of the whole trace instead", lo, hi);
    window = {0, 100};
    widened = true;
  }
  if (gap.rc != 0) return error(status_code::failed_precondition, "step_failed: gap analysis exited %d: %s", gap.rc, tail_of(gap).c_str());
  fs::path csv = dir / "results" / "gap_analysis" / "gap_analysis.csv";
  std::vector<std::string> sargv = {exe, "trace", "sources", "--gap-csv", csv.string()};
  for (const auto& a : repo_args(m_cfg)) sargv.push_back(a);
  sargv.push_back("--json");
  auto sources = m_cmds.run("trace_sources", sargv, {}, {}, 600);
  json sj = json_or_error(sources);
  (void)write_json_file(dir / "trace_sources.json", sj);
  json sum = analysis_summary(json_or_error(report), json_or_error(stages), sj, csv);
  sum["trace"] = trace.string();
  m_report["analysis"] = {{"trace", trace.string()}, {"window_pct", window}, {"window_widened", widened}, {"gap_csv", csv.string()},
                          {"sources_json", (dir / "trace_sources.json").string()}, {"summary", sum}};
  return ok_status();
}

status loop_run::step_choose_kernel() {
  const json& a = m_report["analysis"];
  MAGPIE_ASSIGN_OR_RETURN(std::string text, read_file(json_string(a, "gap_csv")));
  MAGPIE_ASSIGN_OR_RETURN(auto rows, read_gap_csv(text));
  if (rows.empty()) return error(status_code::failed_precondition, "step_failed: gap analysis found no kernels in %s", json_string(a, "trace").c_str());
  auto src = read_json_file(json_string(a, "sources_json"));
  classify(rows, source_confidences(src.ok() ? *src : json::object()), m_cfg);
  json ranking = json::array();
  for (const auto& r : rows) ranking.push_back(ranked_kernel_json(r));
  m_report["ranking"] = ranking;
  auto pick = choose_kernel(rows);
  if (auto* s = std::get_if<stop_reason>(&pick)) {
    m_stop = *s;
    return ok_status();
  }
  const ranked_kernel& row = rows[std::get<size_t>(pick)];
  const op_config* op = m_cfg.find_op(row.op);
  double share = 0, share_ranked = 0, total = 0;
  for (const auto& r : rows) {
    total += r.total_us;
    if (r.op == row.op) share += r.pct_total, share_ranked += r.total_us;
  }
  json above = json::array();
  for (int i = 0; i + 1 < row.rank; ++i) above.push_back({{"rank", rows[i].rank}, {"name", rows[i].name.substr(0, 100)}, {"why", rows[i].why}});
  fs::path path;
  for (const auto& repo : m_cfg.source_repos) {
    std::error_code ec;
    if (path.empty() && fs::exists(repo / row.file, ec)) path = repo / row.file;
  }
  m_report["chosen"] = {{"kernel", row.name}, {"rank", row.rank}, {"op", row.op}, {"source_file", row.source_file},
                        {"file", row.file}, {"path", path.string()}, {"line", row.line},
                        {"confidence", row.confidence ? json(*row.confidence) : json(nullptr)}, {"total_us", row.total_us},
                        {"pct_total", row.pct_total}, {"calls", row.calls}, {"op_share_pct", share},
                        {"op_share_of_ranked_pct", total > 0 ? share_ranked / total * 100.0 : 0.0}, {"skipped_above", above}};
  if (!op || op->candidates.empty())
    m_stop = stop_reason{"no_candidates", "op " + row.op + " (kernel " + row.name + ") has no candidates in the config", {}};
  return ok_status();
}

status loop_run::step_compare() {
  std::string opname = json_string(m_report["chosen"], "op");
  const op_config* op = m_cfg.find_op(opname);
  if (!op) return error(status_code::failed_precondition, "step_failed: op '%s' of the chosen kernel is not in this config's ops", opname.c_str());
  fs::path dir = m_opts.workspace / "compare";
  MAGPIE_RETURN_IF_ERROR(make_dirs(dir));
  env_list env;
  std::vector<std::pair<std::string, std::string>> vars = {{"concurrency", std::to_string(m_cfg.workload.concurrency())},
                                                           {"config_dir", m_cfg.dir.string()}};
  for (const auto& [k, v] : m_cfg.compare_env) {
    MAGPIE_ASSIGN_OR_RETURN(std::string x, expand_placeholders(v, vars));
    env.emplace_back(k, x);
  }
  auto r = m_cmds.run("compare", {m_opts.self_exe.string(), "compare", "-k", op->compare_yaml.string(), "-o", dir.string(),
                                  "--max-time", strprintf("%g", m_cfg.compare_max_time_s)}, {}, env, 1800);
  fs::path rep;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (fs::exists(e.path() / "compare_report.json", ec) && (rep.empty() || e.path().filename() > rep.parent_path().filename()))
      rep = e.path() / "compare_report.json";
  if (rep.empty()) return error(status_code::failed_precondition, "step_failed: compare (rc %d) wrote no compare_report.json under %s: %s", r.rc, dir.c_str(), tail_of(r).c_str());
  MAGPIE_ASSIGN_OR_RETURN(json cr, read_json_file(rep));
  m_report["compare_report"] = rep.string();
  MAGPIE_ASSIGN_OR_RETURN(compare_report_record decoded, decode_compare_report(cr, rep.string()));
  gate_result g = choose_winner(decoded, *op);
  m_report["kernel"] = gate_result_json(g);
  if (g.stop) m_stop = g.stop;
  return ok_status();
}

}  // namespace magpie::optimize
