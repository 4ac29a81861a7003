// The reports of an analyze / compare run (analyze_report.json, compare_report.json,
// reference_report.json) and their console text, from the typed results of kernel/evaluate.h and
// kernel/compare.h. Measuring never formats: kernel/run.cpp orders the stages, these print.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"
#include "kernel/compare.h"
#include "kernel/evaluate.h"

namespace magpie::kernel {

/// Upstream Magpie's EvaluationState dict plus our fields.
json kernel_eval_json(const kernel_eval& k, const eval_context& ctx);
/// Upstream Magpie's console block for one kernel.
std::string kernel_eval_text(const kernel_eval& k);

/// The keys every run report starts with: mode, timestamp, magpie_version, config_file,
/// gpu_arch, cupti_injection, run_seed.
json report_header(const eval_context& ctx);
/// One row of a report's `summary` (upstream Magpie's per-kernel states, score, outcome).
json summary_row(const kernel_eval& k);
/// Report entry of the reference: its own job's report when it came from another job.
json reference_json(const kernel_eval& ref, const eval_context& ctx);
json external_reference_json(const external_reference& ext);

/// Where a compare's wall time went (seconds; the cost of a compare, issue 36). `other` is the
/// workspace, GPU detection and the verdicts.
struct compare_phases {
  double compile_s = 0, correctness_s = 0, timing_s = 0, other_s = 0, total_s = 0;
};

/// What compare_report.json prints besides the context.
struct compare_run {
  const std::vector<kernel_eval>* kernels = nullptr;  ///< every implementation, in order
  const kernel_eval* reference = nullptr;             ///< the reference (a kernel of `kernels` when it is the baseline)
  bool separate_reference = false;                    ///< the reference is not one of `kernels`
  compare_result result;
  compare_phases phases;
};

/// compare_report.json: the header, `summary` rows, `results` (kernel_results, the compare
/// result's keys, reference, policies, timing_order, workers, summary, phases), the separate
/// reference's entry and an external reference.
json compare_report_json(const eval_context& ctx, const compare_run& run);
/// The console text of a compare: a banner, the compare summary and the workspace.
std::string compare_console(const compare_result& cr, const fs::path& workspace);

}  // namespace magpie::kernel
