#include "sched/merge.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/state_row_codec.h"
#include "core/states.h"
#include "core/strings.h"
#include "core/workspace.h"
#include "magpie_generated/version.h"
#include "sched/engine.h"
#include "sched/job_results.h"
#include "sched/merge_report_writer.h"
#include "sched/slurm_codec.h"
#include "kernel/policy_printer.h"

namespace magpie::sched {

using kernel::eval_request;
using namespace merge_detail;


std::string engine_title(const batch& b) { return b.engine == engine_kind::ray ? "Ray" : "Slurm"; }

task_status batch_status(const batch& b) {
  bool failed = false;
  for (const auto& j : b.jobs) {
    if (!job_settled(j)) return task_status::running;
    bool outcome = b.mode != batch_mode::command && j.last.state == job_state::failed && j.last.exit_status == 1;
    failed = failed || !(j.last.state == job_state::completed || outcome);
  }
  return failed ? task_status::failed : task_status::succeeded;
}

std::string jobs_table(const batch& b) {
  int w = 10;  // Slurm ids are short, Ray submission ids are magpie-<batch>-<job>
  for (const auto& j : b.jobs) w = std::max(w, static_cast<int>(j.job_id.size()));
  std::string id_head = b.engine == engine_kind::ray ? "RAY ID" : "SLURM ID";
  std::string s = strprintf("  %-28s %-*s %-14s %-16s %s\n", "JOB", w, id_head.c_str(), "STATE", "NODE", "EXIT");
  for (const auto& j : b.jobs) {
    std::string exit = j.last.exit_status >= 0 ? std::to_string(j.last.exit_status)
                       : j.last.exit_signal > 0 ? "sig " + std::to_string(j.last.exit_signal) : "-";
    s += strprintf("  %-28s %-*s %-14s %-16s %s\n", j.name.c_str(), w, j.job_id.empty() ? "-" : j.job_id.c_str(),
                   job_state_name(j.last.state), j.last.nodes.empty() ? "-" : j.last.nodes.c_str(), exit.c_str());
  }
  return s;
}

merged_report merge_analyze(const batch& b, const eval_request& req, const std::string& ts) {
  auto views = load_views(b);
  auto rows = correctness_rows(b, req);
  std::vector<bool> bad(rows.size(), false);
  merged_report m;
  json report = header(b, req, kernel::run_mode::analyze, ts, views);
  json ref = nullptr;
  if (auto it = views.find("reference"); it != views.end()) {
    ref = it->second.report.is_object() ? json_value(it->second.report, "reference")
                                        : json{{"error", job_end_text(it->second.job)}};
  }
  report["reference"] = ref;
  report["summary"] = json::array();
  report["results"] = json::array();
  json inputs = check_inputs(b, views, rows, &bad);
  for (size_t i = 0; i < rows.size(); ++i) {
    const job_record* job = b.find(rows[i].job);
    json row = rows[i].row.is_object() ? rows[i].row : missing_kernel_row(req.kernels[i], job, "");
    if (bad[i]) force_incorrect(row, "its inputs differ from the batch's (see scheduler.inputs)");
    row["job"] = job_brief(job);
    report["summary"].push_back(summary_row_from(row));
    report["results"].push_back(row);
    if (!row_correct(row)) m.exit_code = 1;
    m.console += strprintf("Kernel: %s  [%s %s on %s]\n  Compiling: %s  Correctness: %s (%s)  Performance: %s  Score: %.2f\n",
                           req.kernels[i].id.c_str(), job ? job->job_id.c_str() : "-",
                           job ? job_state_name(job->last.state) : "-",
                           job && !job->last.nodes.empty() ? job->last.nodes.c_str() : "-",
                           json_string(row, "compiling_state").c_str(), json_string(row, "correctness_state").c_str(),
                           json_string(row, "correctness_method").c_str(), json_string(row, "performance_state").c_str(),
                           json_number(row, "score", 0.0));
    if (auto errors = json_strings(row, "errors"); !errors.empty()) m.console += "  Error: " + errors[0] + "\n";
  }
  json sched = scheduler_section(b, req);
  sched["inputs"] = inputs;
  sched["timing"] = {{"interleaved", false},
                     {"note", "each kernel was timed in its own job on its own node (see results[].job.nodes): "
                              "times from different jobs or nodes are not side-by-side measurements"}};
  report["scheduler"] = sched;
  m.report = report;
  m.console += "\n" + engine_title(b) + " jobs:\n" + jobs_table(b);
  return m;
}

}  // namespace magpie::sched
