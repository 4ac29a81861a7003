// compare batches: correctness from the per-kernel jobs, verdicts from the timing job, which
// re-checked and timed the baseline and every correct candidate together on one node.
#include <algorithm>

#include "core/states.h"
#include "core/strings.h"
#include "sched/job_results.h"
#include "sched/merge.h"
#include "sched/merge_util.h"

namespace magpie::sched {

using kernel::eval_request;
using namespace merge_detail;

namespace {

// What the timing job measured, mapped back to request kernel indices.
struct timing_view {
  bool measured = false;            ///< a compare (or baseline-only analyze) report exists
  std::vector<int> order;           ///< timing-report index → request index
  std::map<int, json> rows, verdicts;
  json rankings = json::array();
  int winner = -1;
  std::string winner_reason;
  json section;                     ///< scheduler.timing
};

bool timing_indices_valid(const std::vector<int>& order, const eval_request& req) {
  for (int i : order)
    if (i < 0 || static_cast<size_t>(i) >= req.kernels.size()) return false;
  return true;
}

// The compare report of the timing job: rows, verdicts, rankings and winner, by timing-report
// index mapped back to request indices.
status read_compare_timing(const json& rep, timing_view* t) {
  json_fields results = json_fields(rep, "timing report").child("results");
  MAGPIE_RETURN_IF_ERROR(results.check_object());
  json rows, verdicts, rankings;
  MAGPIE_RETURN_IF_ERROR(results.require("kernel_results", &rows));
  MAGPIE_RETURN_IF_ERROR(results.require("verdicts", &verdicts));
  MAGPIE_RETURN_IF_ERROR(results.read("rankings", &rankings));
  if (!rows.is_array() || !verdicts.is_array() || rows.size() < t->order.size() || verdicts.size() < t->order.size())
    return invalid_argument("timing report: results has fewer kernel_results / verdicts than timed kernels");
  auto request_index = [&](const json& i) -> std::optional<int> {
    auto k = json_as_uint(i);
    if (!k || *k >= t->order.size()) return std::nullopt;
    return t->order[*k];
  };
  for (size_t k = 0; k < t->order.size(); ++k) {
    t->rows[t->order[k]] = rows[k];
    json vd = verdicts[k];
    if (!vd.is_object()) return invalid_argument("timing report: results.verdicts[%zu] is not an object", k);
    vd["index"] = t->order[k];
    t->verdicts[t->order[k]] = vd;
  }
  if (rankings.is_array())
    for (const auto& rk : rankings) {
      auto i = rk.is_array() && rk.size() == 2 ? request_index(rk[0]) : std::nullopt;
      if (!i) return invalid_argument("timing report: a results.rankings entry is not [index, score]");
      t->rankings.push_back({*i, rk[1]});
    }
  if (const json* w = json_member(results.doc(), "winner"); w && w->is_number()) {
    auto i = request_index(*w);
    if (!i) return invalid_argument("timing report: results.winner is not a timed kernel");
    t->winner = *i;
  }
  t->winner_reason = json_string(results.doc(), "winner_reason");
  return ok_status();
}

timing_view read_timing(const eval_request& req, const std::map<std::string, job_view>& views) {
  timing_view t;
  auto it = views.find("timing");
  if (!req.performance.enabled || it == views.end()) {
    t.section = {{"interleaved", false}, {"note", "performance disabled (--no-perf): nothing was timed"}};
    return t;
  }
  const job_view& v = it->second;
  const json& res = v.result;
  if (res.is_object() && res.contains("skipped")) {
    t.section = {{"interleaved", false}, {"job", job_brief(v.job)}, {"note", res["skipped"]}};
    return t;
  }
  auto no_timing = [&](const std::string& why) {
    t.section = {{"interleaved", false}, {"job", job_brief(v.job)}, {"note", "no kernel was timed: " + why}};
    return t;
  };
  if (!v.report.is_object() || !json_member(res, "timed_indices")) {
    std::string error = json_string(res, "error");
    return no_timing(job_end_text(v.job) + (error.empty() ? "" : " — " + error));
  }
  // The timing job's files are read field by field: a missing or mistyped field becomes the
  // note of an untimed batch, naming the file and field.
  json_fields result(res, (v.job ? v.job->dir / "result.json" : fs::path("result.json")).string());
  if (auto st = result.require("timed_indices", &t.order); !st.ok()) return no_timing(st.message());
  if (t.order.empty() || !timing_indices_valid(t.order, req)) return no_timing("timed_indices do not name the request's kernels");
  if (json_string(v.report, "mode") == "compare") {
    if (auto st = read_compare_timing(v.report, &t); !st.ok()) return no_timing(st.message());
  } else {  // the baseline alone (no other kernel was correct)
    const json* results = json_member(v.report, "results");
    if (!results || !results->is_array() || results->empty()) return no_timing("the timing report has no results");
    json row = results->front();
    int b0 = t.order[0];
    t.rows[b0] = row;
    std::optional<double> median = timed_median_ns(row);
    bool timed = median.has_value();
    double med = median.value_or(0);
    t.verdicts[b0] = {{"index", b0}, {"kernel_id", req.kernels[static_cast<size_t>(b0)].id},
                      {"verdict", "baseline"}, {"speedup_vs_baseline", timed ? 1.0 : 0.0},
                      {"ci_low", timed ? 1.0 : 0.0}, {"ci_high", timed ? 1.0 : 0.0},
                      {"confidence", req.compare.confidence}, {"median_ns", timed ? json(med) : json(nullptr)},
                      {"reason", timed ? "" : "baseline"}};
    if (timed) t.rankings.push_back({b0, 1.0});
  }
  t.measured = true;
  std::string node = json_string(v.result, "node");
  t.section = {{"interleaved", true},
               {"job", job_brief(v.job)},
               {"node", node},
               {"timed_indices", t.order},
               {"note", strprintf("the baseline and the %zu correct candidate(s) were re-checked against the reference "
                                  "and timed together, interleaved, in one job on one node (%s), as a local compare "
                                  "does: verdicts are side-by-side measurements. Correctness was first decided in one "
                                  "job per kernel, possibly on other nodes; times from those jobs are not used.",
                                  t.order.size() - 1, node.c_str())}};
  return t;
}

json untimed_verdict(int i, const std::string& id, bool correct, bool is_base, const eval_request& req,
                     const std::string& timing_problem) {
  std::string verdict = "not_ranked", reason;
  if (!correct) reason = "incorrect or failed: incorrect candidates are never ranked";
  else if (is_base) verdict = reason = "baseline";
  else reason = "no timing for this kernel or the baseline" + (timing_problem.empty() ? "" : " (" + timing_problem + ")");
  return {{"index", i}, {"kernel_id", id}, {"verdict", verdict}, {"speedup_vs_baseline", 0.0}, {"ci_low", 0.0},
          {"ci_high", 0.0}, {"confidence", req.compare.confidence}, {"median_ns", nullptr}, {"reason", reason}};
}

std::string summary_text(const eval_request& req, const std::vector<json>& rows, const std::vector<json>& vs,
                         int winner, const batch& b) {
  size_t n = rows.size();
  int correct = 0;
  for (const auto& r : rows) correct += row_correct(r);
  std::string s = strprintf("Compared %zu kernel implementations\n\nCorrectness: %d/%zu passed\n\nResults:\n", n, correct, n);
  for (size_t i = 0; i < n; ++i) {
    bool ok = row_correct(rows[i]);
    s += strprintf("  %s Kernel %zu: %s", ok ? "\u2713" : "\u2717", i, req.kernels[i].id.c_str());
    const std::string v = json_string(vs[i], "verdict");
    if (v == "baseline") s += " [baseline]";
    else if (v == "not_ranked") s += " [not ranked: " + (ok ? std::string("not timed") : json_string(rows[i], "outcome", "failed")) + "]";
    else
      s += strprintf(" [%s: %.3fx vs baseline, CI %.3f-%.3f]", v.c_str(), json_number(vs[i], "speedup_vs_baseline", 0.0),
                     json_number(vs[i], "ci_low", 0.0), json_number(vs[i], "ci_high", 0.0));
    if (const json* j = json_member(rows[i], "job"); j && j->is_object()) {
      std::string state = json_string(*j, "state");
      job_state js = parse_job_state(state);
      if (js != job_state::completed && js != job_state::failed) s += " {job " + state + "}";
    }
    s += "\n";
  }
  if (winner >= 0) s += strprintf("\nWinner: Kernel %d (%s)\n", winner, req.kernels[static_cast<size_t>(winner)].id.c_str());
  else s += "\nWinner: none (no correct kernel)\n";
  s += "\n" + engine_title(b) + " jobs (batch " + b.dir.string() + "):\n" + jobs_table(b);
  return s;
}

}  // namespace

merged_report merge_compare(const batch& b, const eval_request& req, const std::string& ts) {
  auto views = load_views(b);
  auto rows = correctness_rows(b, req);
  const int n = static_cast<int>(req.kernels.size());
  const int base = req.baseline_index;
  std::vector<bool> bad(rows.size(), false);
  json inputs = check_inputs(b, views, rows, &bad);
  timing_view t = read_timing(req, views);
  std::string timing_problem = t.measured || !req.performance.enabled ? "" : json_string(t.section, "note");

  std::vector<json> final_rows, vs;
  for (int i = 0; i < n; ++i) {
    const auto& src = rows[static_cast<size_t>(i)];
    const job_record* job = b.find(src.job);
    json row = src.row.is_object() ? src.row : missing_kernel_row(req.kernels[static_cast<size_t>(i)], job, "");
    json jobs = {{"correctness", job_brief(job)}};
    if (auto tr = t.rows.find(i); tr != t.rows.end()) {
      bool was_ok = row_correct(row);
      row = tr->second;
      if (was_ok && !row_correct(row))
        row["scheduler_note"] = "passed in its own job but failed the re-check in the timing job";
      jobs["timing"] = job_brief(b.find("timing"));
    }
    if (bad[static_cast<size_t>(i)]) force_incorrect(row, "its inputs differ from the batch's (see scheduler.inputs)");
    row["job"] = jobs["correctness"];
    row["jobs"] = jobs;
    final_rows.push_back(row);
  }
  for (int i = 0; i < n; ++i) {
    bool ok = row_correct(final_rows[static_cast<size_t>(i)]);
    auto tv = t.verdicts.find(i);
    if (tv != t.verdicts.end() && ok) vs.push_back(tv->second);
    else vs.push_back(untimed_verdict(i, req.kernels[static_cast<size_t>(i)].id, ok, i == base, req, timing_problem));
  }
  json rankings = json::array();
  for (const auto& r : t.rankings)  // [request index, score], checked by read_compare_timing
    if (auto i = json_as_uint(r[0]); i && *i < vs.size() && json_string(vs[*i], "verdict") != "not_ranked")
      rankings.push_back(r);
  int winner = t.winner;
  std::string winner_reason = t.winner_reason;
  if (winner >= 0 && !row_correct(final_rows[static_cast<size_t>(winner)])) winner = -1;
  if (winner < 0 && row_correct(final_rows[static_cast<size_t>(base)])) {
    winner = base;
    winner_reason = "no correct candidate is significantly faster than the baseline";
  }
  for (int i = 0; i < n && winner < 0; ++i)
    if (row_correct(final_rows[static_cast<size_t>(i)])) {
      winner = i;
      winner_reason = "first correct kernel (the baseline is not correct and nothing was ranked faster)";
    }

  merged_report m;
  json report = header(b, req, "compare", ts, views);
  report["summary"] = json::array();
  json results;
  results["kernel_results"] = json::array();
  json correctness = json::array(), scores = json::array(), verdicts = json::array();
  bool all_correct = true;
  for (int i = 0; i < n; ++i) {
    const json& row = final_rows[static_cast<size_t>(i)];
    report["summary"].push_back(summary_row_from(row));
    results["kernel_results"].push_back(row);
    bool ok = row_correct(row);
    all_correct = all_correct && ok;
    correctness.push_back(ok);
    const json& v = vs[static_cast<size_t>(i)];
    scores.push_back(json_string(v, "verdict") == "not_ranked" ? json(nullptr) : json_value(v, "speedup_vs_baseline"));
    verdicts.push_back(v);
  }
  results["comparison_metrics"] = {{"correctness", correctness}, {"all_correct", all_correct}, {"perf_scores", scores},
                                   {"perf_score_definition", "speedup vs the baseline: median(baseline)/median(kernel)"}};
  results["winner"] = winner >= 0 ? json(winner) : json(nullptr);
  results["winner_reason"] = winner_reason;
  results["rankings"] = rankings;
  results["baseline_index"] = base;
  results["reference"] = req.reference ? req.reference->id : req.kernels[static_cast<size_t>(base)].id;
  results["verdicts"] = verdicts;
  results["compare_policy"] = req.compare.to_json();
  results["timing_policy"] = req.timing.to_json();
  std::string summary = summary_text(req, final_rows, vs, winner, b);
  results["summary"] = summary;
  report["results"] = results;
  if (req.reference) {
    auto it = views.find("reference");
    report["reference"] = it != views.end() && it->second.report.is_object()
                              ? json_value(it->second.report, "reference")
                              : json{{"error", job_end_text(it == views.end() ? nullptr : it->second.job)}};
  }
  json sched = scheduler_section(b, req);
  sched["inputs"] = inputs;
  sched["timing"] = t.section;
  sched["timing_interleaved"] = json_bool(t.section, "interleaved", false);
  report["scheduler"] = sched;
  m.report = report;
  std::string sep(60, '=');
  m.console = sep + "\nCOMPARISON RESULTS (" + b.engine + ")\n" + sep + "\n" + summary;
  return m;
}

}  // namespace magpie::sched
