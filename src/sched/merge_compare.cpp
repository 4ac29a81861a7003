// compare batches: correctness from the per-kernel jobs, verdicts from the timing job, which
// re-checked and timed the baseline and every correct candidate together on one node.
#include <algorithm>

#include "core/states.h"
#include "core/state_row_codec.h"
#include "core/strings.h"
#include "kernel/compare_printer.h"
#include "sched/job_results.h"
#include "sched/merge.h"
#include "sched/merge_report_writer.h"
#include "kernel/policy_printer.h"

namespace magpie::sched {

using kernel::compare_kernel;
using kernel::eval_request;
using kernel::verdict;
using kernel::verdict_kind;
using namespace merge_detail;

namespace {

// What the timing job measured, mapped back to request kernel indices.
struct timing_view {
  bool measured = false;            ///< a compare (or baseline-only analyze) report exists
  std::vector<int> order;           ///< timing-report index → request index
  std::map<int, json> rows;
  std::map<int, verdict> verdicts;  ///< of the timed kernels, by request index
  std::map<int, double> median_ns;
  json section;                     ///< scheduler.timing
};

bool timing_indices_valid(const std::vector<int>& order, const eval_request& req) {
  for (int i : order)
    if (i < 0 || static_cast<size_t>(i) >= req.kernels.size()) return false;
  return true;
}

// The compare report of the timing job: rows and verdicts, by timing-report index mapped
// back to request indices. Rankings and the winner are rebuilt from the verdicts.
status read_compare_timing(const json& rep, timing_view* t) {
  json_fields results = json_fields(rep, "timing report").child("results");
  MAGPIE_RETURN_IF_ERROR(results.check_object());
  json rows, verdicts;
  MAGPIE_RETURN_IF_ERROR(results.require("kernel_results", &rows));
  MAGPIE_RETURN_IF_ERROR(results.require("verdicts", &verdicts));
  if (!rows.is_array() || !verdicts.is_array() || rows.size() < t->order.size() || verdicts.size() < t->order.size())
    return invalid_argument("timing report: results has fewer kernel_results / verdicts than timed kernels");
  for (size_t k = 0; k < t->order.size(); ++k) {
    const int i = t->order[k];
    t->rows[i] = rows[k];
    json_fields vf(verdicts[k], "timing report", strprintf("results.verdicts[%zu]", k));
    MAGPIE_ASSIGN_OR_RETURN(verdict_record rec, decode_verdict(vf));
    verdict v = kernel::verdict_of(rec);
    v.index = i;
    t->verdicts[i] = v;
    t->median_ns[i] = rec.median_ns.value_or(0);
  }
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
  if (kernel::parse_run_mode(json_string(v.report, "mode")) == kernel::run_mode::compare) {
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
    verdict v;
    v.index = b0;
    v.verdict = verdict_kind::baseline;
    v.speedup = v.ci_low = v.ci_high = timed ? 1.0 : 0.0;
    v.reason = timed ? "" : "baseline";
    t.verdicts[b0] = v;
    t.median_ns[b0] = med;
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

verdict untimed_verdict(int i, bool correct, bool is_base, const std::string& timing_problem) {
  verdict v;
  v.index = i;
  v.verdict = verdict_kind::not_ranked;
  if (!correct) v.reason = "incorrect or failed: incorrect candidates are never ranked";
  else if (is_base) v.verdict = verdict_kind::baseline, v.reason = "baseline";
  else v.reason = "no timing for this kernel or the baseline" + (timing_problem.empty() ? "" : " (" + timing_problem + ")");
  return v;
}

// A kernel of the merged compare: the timing job's verdict when it is correct and was timed.
compare_kernel merged_kernel(int i, const json& row, const timing_view& t, const eval_request& req,
                             const std::string& timing_problem) {
  compare_kernel k;
  k.id = req.kernels[static_cast<size_t>(i)].id;
  k.correct = row_correct(row);
  k.exit_code_only = row_correctness_basis(row, correctness_basis::none) == correctness_basis::exit_code;
  k.expect_incorrect = req.kernels[static_cast<size_t>(i)].expect_incorrect;
  auto tv = t.verdicts.find(i);
  if (tv != t.verdicts.end() && k.correct) {
    k.v = tv->second;
    k.median_ns = t.median_ns.at(i);
  } else {
    k.v = untimed_verdict(i, k.correct, i == req.baseline_index, timing_problem);
  }
  k.not_ranked_why = k.correct ? "not timed" : json_string(row, "outcome", "failed");
  if (const json* j = json_member(row, "job"); j && j->is_object()) {
    std::string state = json_string(*j, "state");
    job_state js = parse_job_state(state);
    if (js != job_state::completed && js != job_state::failed) k.note = " {job " + state + "}";
  }
  return k;
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

  std::vector<json> final_rows;
  std::vector<compare_kernel> kernels;
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
    kernels.push_back(merged_kernel(i, row, t, req, timing_problem));
    final_rows.push_back(row);
  }
  kernel::compare_result cr = kernel::build_compare_result(std::move(kernels), base);

  merged_report m;
  json report = header(b, req, kernel::run_mode::compare, ts, views);
  report["summary"] = json::array();
  json results;
  results["kernel_results"] = json::array();
  for (const json& row : final_rows) {
    report["summary"].push_back(summary_row_from(row));
    results["kernel_results"].push_back(row);
  }
  write_compare_result(cr, req.compare.confidence, results);
  results["reference"] = req.reference ? req.reference->id : req.kernels[static_cast<size_t>(base)].id;
  results["compare_policy"] = compare_policy_json(req.compare);
  results["timing_policy"] = timing_policy_json(req.timing);
  std::string summary = cr.summary() + "\n" + engine_title(b) + " jobs (batch " + b.dir.string() + "):\n" + jobs_table(b);
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
  m.console = sep + "\nCOMPARISON RESULTS (" + engine_kind_name(b.engine) + ")\n" + sep + "\n" + summary;
  return m;
}

}  // namespace magpie::sched
