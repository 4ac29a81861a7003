// Steps trace_analysis, choose_kernel and compare: magpie's own subcommands run as children
// (trace stages / report, gap analysis with kernel sources, trace sources, compare), their
// outputs read back, and the decisions of decide.h applied.
#include <algorithm>

#include "core/log.h"
#include "core/strings.h"
#include "optimize/decide_codec.h"
#include "optimize/analysis_codec.h"
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

}  // namespace

status loop_run::step_trace_analysis() {
  if (!m_report.profile) return error(status_code::failed_precondition, "step_failed: no profiled run in the report");
  fs::path trace = m_report.profile->trace;
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
  double window_lo = m_cfg.gap.start_pct, window_hi = m_cfg.gap.end_pct;
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
    window_lo = 0, window_hi = 100;
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
  analysis_summary sum = summarize_analysis(json_or_error(report), json_or_error(stages), sj, csv);
  sum.trace = trace.string();
  m_report.analysis = analysis_record{trace.string(), window_lo, window_hi, widened, csv.string(),
                                      (dir / "trace_sources.json").string(), std::move(sum)};
  return ok_status();
}

status loop_run::step_choose_kernel() {
  if (!m_report.analysis) return error(status_code::failed_precondition, "step_failed: no trace analysis in the report");
  const analysis_record& a = *m_report.analysis;
  MAGPIE_ASSIGN_OR_RETURN(std::string text, read_file(a.gap_csv));
  MAGPIE_ASSIGN_OR_RETURN(auto rows, read_gap_csv(text));
  if (rows.empty()) return error(status_code::failed_precondition, "step_failed: gap analysis found no kernels in %s", a.trace.c_str());
  auto src = read_json_file(a.sources_json);
  classify(rows, source_confidences(src.ok() ? *src : json::object()), m_cfg);
  m_report.ranking = rows;
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
  std::vector<skipped_kernel> above;
  for (int i = 0; i + 1 < row.rank; ++i) above.push_back({rows[i].rank, rows[i].name.substr(0, 100), rows[i].why});
  fs::path path;
  for (const auto& repo : m_cfg.source_repos) {
    std::error_code ec;
    if (path.empty() && fs::exists(repo / row.file, ec)) path = repo / row.file;
  }
  m_report.chosen = chosen_kernel{row.name,     row.rank,      row.op,    row.source_file, row.file, path.string(), row.line,
                                  row.confidence, row.total_us, row.pct_total, row.calls, share,
                                  total > 0 ? share_ranked / total * 100.0 : 0.0, std::move(above)};
  if (!op || op->candidates.empty())
    m_stop = stop_reason{"no_candidates", "op " + row.op + " (kernel " + row.name + ") has no candidates in the config", {}};
  return ok_status();
}

status loop_run::step_compare() {
  std::string opname = m_report.chosen ? m_report.chosen->op : std::string();
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
  m_report.compare_report = rep.string();
  MAGPIE_ASSIGN_OR_RETURN(compare_report_record decoded, decode_compare_report(cr, rep.string()));
  gate_result g = choose_winner(decoded, *op);
  m_report.kernel = g;
  if (g.stop) m_stop = g.stop;
  return ok_status();
}

}  // namespace magpie::optimize
