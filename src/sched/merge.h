// Merging the jobs of a batch into one report with the local run's keys:
//   compare → compare_report.json (kernel_results, comparison_metrics, verdicts, rankings,
//             winner, summary) + a "scheduler" section: per-job Slurm state, the identical-
//             inputs check (run seed, trial seeds, reference manifest) and how timing was done.
//   analyze → analyze_report.json (reference, summary, results) + "scheduler".
// Kernels whose job failed, timed out, was cancelled or never ran get a row that says so
// (correctness FAILED, outcome timeout|failed, the job state and log path): nothing is lost.
#pragma once

#include "core/states.h"
#include "kernel/spec.h"
#include "sched/batch.h"

namespace magpie::sched {

struct merged_report {
  json report;
  std::string console;  ///< stdout text in the style of the local run
  int exit_code = 0;    ///< analyze: 1 when a kernel is not correct; compare: 0 (as locally)
};

/// Builds the merged report from what the jobs left on disk and their last known states.
/// `timestamp` is the merged workspace's.
merged_report merge_compare(const batch& b, const kernel::eval_request& req, const std::string& timestamp);
merged_report merge_analyze(const batch& b, const kernel::eval_request& req, const std::string& timestamp);

/// One line per job: "name  job_id  STATE  node  exit".
std::string jobs_table(const batch& b);
/// "Slurm" | "Ray", for console text.
std::string engine_title(const batch& b);
/// The batch as one task (Magpie's Ray task words): RUNNING until every job has settled;
/// SUCCEEDED when every job completed, or (kernel batches) failed with exit code 1 — a kernel
/// that is not correct or does not compile is an outcome in the report, not a failed run;
/// FAILED otherwise (time limit, cancelled, lost, never submitted, other exit codes).
task_status batch_status(const batch& b);

}  // namespace magpie::sched
