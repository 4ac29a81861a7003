// compare batches: correctness from the per-kernel jobs, verdicts from the timing job, which
// re-checked and timed the baseline and every correct candidate together on one node.
#include <algorithm>

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
  if (!v.report.is_object() || !res.contains("timed_indices")) {
    t.section = {{"interleaved", false}, {"job", job_brief(v.job)},
                 {"note", "no kernel was timed: " + job_end_text(v.job) +
                              (res.is_object() && res["error"].is_string() ? " — " + res["error"].get<std::string>() : "")}};
    return t;
  }
  for (const auto& i : res["timed_indices"]) t.order.push_back(i.get<int>());
  t.measured = true;
  const json& rep = v.report;
  if (rep.value("mode", "") == "compare") {
    const json& r = rep["results"];
    for (size_t k = 0; k < t.order.size(); ++k) {
      t.rows[t.order[k]] = r["kernel_results"][k];
      json vd = r["verdicts"][k];
      vd["index"] = t.order[k];
      t.verdicts[t.order[k]] = vd;
    }
    for (const auto& rk : r["rankings"]) t.rankings.push_back({t.order[rk[0].get<size_t>()], rk[1]});
    if (r["winner"].is_number()) t.winner = t.order[r["winner"].get<size_t>()];
    t.winner_reason = r.value("winner_reason", "");
  } else {  // the baseline alone (no other kernel was correct)
    json row = rep["results"][0];
    int b0 = t.order[0];
    t.rows[b0] = row;
    bool timed = row["timing"].is_object() && row["timing"].value("success", false);
    double med = timed ? row["timing"]["stats_ns"]["median"].get<double>() : 0;
    t.verdicts[b0] = {{"index", b0}, {"kernel_id", req.kernels[static_cast<size_t>(b0)].id},
                      {"verdict", "baseline"}, {"speedup_vs_baseline", timed ? 1.0 : 0.0},
                      {"ci_low", timed ? 1.0 : 0.0}, {"ci_high", timed ? 1.0 : 0.0},
                      {"confidence", req.compare.confidence}, {"median_ns", timed ? json(med) : json(nullptr)},
                      {"reason", timed ? "" : "baseline"}};
    if (timed) t.rankings.push_back({b0, 1.0});
  }
  std::string node = v.result.value("node", "");
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
  for (const auto& r : rows) correct += r.value("correctness_state", "") == "SUCCESS";
  std::string s = strprintf("Compared %zu kernel implementations\n\nCorrectness: %d/%zu passed\n\nResults:\n", n, correct, n);
  for (size_t i = 0; i < n; ++i) {
    bool ok = rows[i].value("correctness_state", "") == "SUCCESS";
    s += strprintf("  %s Kernel %zu: %s", ok ? "\u2713" : "\u2717", i, req.kernels[i].id.c_str());
    const std::string v = vs[i].value("verdict", "");
    if (v == "baseline") s += " [baseline]";
    else if (v == "not_ranked") s += " [not ranked: " + std::string(ok ? "not timed" : rows[i].value("outcome", "failed")) + "]";
    else
      s += strprintf(" [%s: %.3fx vs baseline, CI %.3f-%.3f]", v.c_str(), vs[i].value("speedup_vs_baseline", 0.0),
                     vs[i].value("ci_low", 0.0), vs[i].value("ci_high", 0.0));
    if (rows[i].contains("job") && rows[i]["job"].is_object()) {
      const json& j = rows[i]["job"];
      if (j.value("state", "") != "COMPLETED" && j.value("state", "") != "FAILED")
        s += " {job " + j.value("state", "") + "}";
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
  std::string timing_problem = t.measured || !req.performance.enabled ? "" : t.section.value("note", "");

  std::vector<json> final_rows, vs;
  for (int i = 0; i < n; ++i) {
    const auto& src = rows[static_cast<size_t>(i)];
    const job_record* job = b.find(src.job);
    json row = src.row.is_object() ? src.row : missing_kernel_row(req.kernels[static_cast<size_t>(i)], job, "");
    json jobs = {{"correctness", job_brief(job)}};
    if (auto tr = t.rows.find(i); tr != t.rows.end()) {
      bool was_ok = row.value("correctness_state", "") == "SUCCESS";
      row = tr->second;
      if (was_ok && row.value("correctness_state", "") != "SUCCESS")
        row["scheduler_note"] = "passed in its own job but failed the re-check in the timing job";
      jobs["timing"] = job_brief(b.find("timing"));
    }
    if (bad[static_cast<size_t>(i)]) force_incorrect(row, "its inputs differ from the batch's (see scheduler.inputs)");
    row["job"] = jobs["correctness"];
    row["jobs"] = jobs;
    final_rows.push_back(row);
  }
  for (int i = 0; i < n; ++i) {
    bool ok = final_rows[static_cast<size_t>(i)].value("correctness_state", "") == "SUCCESS";
    auto tv = t.verdicts.find(i);
    if (tv != t.verdicts.end() && ok) vs.push_back(tv->second);
    else vs.push_back(untimed_verdict(i, req.kernels[static_cast<size_t>(i)].id, ok, i == base, req, timing_problem));
  }
  json rankings = json::array();
  for (const auto& r : t.rankings)
    if (vs[r[0].get<size_t>()].value("verdict", "") != "not_ranked") rankings.push_back(r);
  int winner = t.winner;
  std::string winner_reason = t.winner_reason;
  if (winner >= 0 && final_rows[static_cast<size_t>(winner)].value("correctness_state", "") != "SUCCESS") winner = -1;
  if (winner < 0 && final_rows[static_cast<size_t>(base)].value("correctness_state", "") == "SUCCESS") {
    winner = base;
    winner_reason = "no correct candidate is significantly faster than the baseline";
  }
  for (int i = 0; i < n && winner < 0; ++i)
    if (final_rows[static_cast<size_t>(i)].value("correctness_state", "") == "SUCCESS") {
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
    bool ok = row.value("correctness_state", "") == "SUCCESS";
    all_correct = all_correct && ok;
    correctness.push_back(ok);
    const json& v = vs[static_cast<size_t>(i)];
    scores.push_back(v.value("verdict", "") == "not_ranked" ? json(nullptr) : v["speedup_vs_baseline"]);
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
  results["summary"] = summary_text(req, final_rows, vs, winner, b);
  report["results"] = results;
  if (req.reference) {
    auto it = views.find("reference");
    report["reference"] = it != views.end() && it->second.report.is_object()
                              ? it->second.report.value("reference", json(nullptr))
                              : json{{"error", job_end_text(it == views.end() ? nullptr : it->second.job)}};
  }
  json sched = scheduler_section(b, req);
  sched["inputs"] = inputs;
  sched["timing"] = t.section;
  sched["timing_interleaved"] = t.section.value("interleaved", false);
  report["scheduler"] = sched;
  m.report = report;
  std::string sep(60, '=');
  m.console = sep + "\nCOMPARISON RESULTS (" + b.engine + ")\n" + sep + "\n" + results["summary"].get<std::string>();
  return m;
}

}  // namespace magpie::sched
