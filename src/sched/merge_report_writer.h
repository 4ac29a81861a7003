// The writer of the merged reports (internal to src/sched): the parts of compare_report.json /
// analyze_report.json that merge_compare and merge_analyze assemble from what the jobs left. An
// edge file: the jobs' report rows (kernel_eval_json) pass into the merged report as written, so
// these functions read and write report JSON; the rest of sched hands typed values around
// (batch, job_record, kernel_row's verdicts through core/compare_report_codec.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/batch.h"
#include "sched/job_results.h"

namespace magpie::sched::merge_detail {

/// What one job left: its result.json and report (both null when absent).
struct job_view {
  const job_record* job = nullptr;
  json result = nullptr, report = nullptr;
};

std::map<std::string, job_view> load_views(const batch& b);
/// "slurm job 12 (k01_x) ended TIMEOUT (TimeLimit); log: ..." and the like.
std::string job_end_text(const job_record* j);
/// {name, job_id, state, nodes, exit_code} of the job that produced a row.
json job_brief(const job_record* j);
/// The local run's summary row, from a kernel_eval_json row.
json summary_row_from(const json& row);
/// timing.stats_ns.median of a row whose timing succeeded; nullopt otherwise.
std::optional<double> timed_median_ns(const json& row);
/// The local report header (mode, timestamp, magpie_version, config_file, gpu_arch, ...).
json header(const batch& b, const kernel::eval_request& req, kernel::run_mode mode, const std::string& ts,
            const std::map<std::string, job_view>& views);
/// Checks that every job used the batch's run seed, the reference's trial seeds and the one
/// reference manifest; marks rows whose inputs differ in `bad`. Returns scheduler.inputs.
json check_inputs(const batch& b, const std::map<std::string, job_view>& views, const std::vector<kernel_row>& rows,
                  std::vector<bool>* bad);
/// Marks a row not correct, with the reason appended to its errors.
void force_incorrect(json& row, const std::string& why);

}  // namespace magpie::sched::merge_detail

namespace magpie::sched {

/// The "scheduler" section shared by both merges: environment, batch, jobs with their states.
json scheduler_section(const batch& b, const kernel::eval_request& req);
/// A kernel row for a kernel whose job wrote no report (or never ran).
json missing_kernel_row(const kernel::kernel_spec& spec, const job_record* job, const std::string& why);

}  // namespace magpie::sched
