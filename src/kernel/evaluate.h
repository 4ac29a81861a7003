// The analyze / compare pipeline: compile → correctness (against the reference) → timing →
// profile → score, with upstream Magpie's states and report keys plus our measurement details.
#pragma once

#include <optional>

#include "core/workspace.h"
#include "kernel/correctness.h"
#include "kernel/integrity.h"
#include "kernel/prepare.h"
#include "kernel/timing.h"
#include "kernel/workers.h"

namespace magpie::kernel {

/// Everything known about one kernel after evaluation.
struct kernel_eval {
  kernel_spec spec;
  prepared_kernel prepared;
  stage_result compiling, correctness, performance;
  correctness_basis basis = correctness_basis::none;  ///< the report's correctness_method
  std::optional<correctness_run> run;
  std::optional<correctness_verdict> verdict;
  std::optional<held_reference> held;       ///< set on the reference entry: its results in memory
  std::optional<timing_result> timing;
  integrity_report integrity;
  json correctness_info = json::object();   ///< seeds, reference id, sizes checked, notes
  bool timed_out = false;
  double score = 0;
  env_list device_env;                      ///< binds its correctness processes to one GPU (compare workers)
  bool compiled = false;                    ///< `prepared` and `compiling` set already (compile_all)
  kernel_outcome outcome() const;
  bool speaks_protocol() const { return run && run->result.has_value(); }
};

/// Where python candidates take their inputs from when a python reference exists: the
/// reference's generator, never the candidate module's own get_inputs / sizes.
struct reference_inputs {
  std::string reference_id;
  std::string module;           ///< file defining get_inputs (and get_sizes, get_init_inputs)
  std::string get_inputs = "get_inputs";
  std::string get_init_inputs = "get_init_inputs";
};

/// Per-run state shared by the stages.
struct eval_context {
  eval_request req;
  workspace ws;
  std::string gpu_arch;
  cupti_setup cupti;
  uint64_t run_seed = 0;
  std::vector<uint64_t> seeds;  ///< one per correctness trial
  uint64_t timing_seed = 0;
  /// Secret seeds of the timed samples whose outputs are checked (fresh from /dev/urandom
  /// every run, never derived from run_seed; given to the reference's correctness run only).
  std::vector<uint64_t> check_seeds;
  uint64_t order_seed = 0;      ///< shuffles the sampling order of each round (secret until the report)
  std::optional<reference_inputs> ref_inputs;
  std::optional<kernel::timing_order> timing_order;  ///< how the timing rounds were ordered (set by evaluate_performance)
  worker_plan workers;          ///< compare workers and their GPUs (kernel/workers.h); default: one, unbound
  prepare_context pctx;
};

/// Fills seeds, GPU arch, CUPTI setup and the workspace; writes config.yaml.
status_or<eval_context> make_context(const eval_request& req, const std::string& label);

/// Compiles and runs the correctness stage. `reference` is the reference's held results
/// (nullptr: none); `is_reference` marks the entry that produces them (k.held is then set and
/// the reference's files are removed before any candidate runs).
void evaluate_correctness(kernel_eval& k, eval_context& ctx, const held_reference* reference, bool is_reference);
/// Compiles every kernel of `ks` (prepare_kernel) before any correctness run, in parallel up to
/// the machine's cores (at most 8; nothing is timed meanwhile). Each kernel builds into its own
/// directory and keeps its own outcome (a failed compile fails only that kernel); the commands
/// and outcomes are logged afterwards in the order of `ks`, so the log does not depend on which
/// compile finished first. Marks them `compiled` (evaluate_correctness then runs no compile).
void compile_all(const std::vector<kernel_eval*>& ks, const eval_context& ctx);
/// The reference_inputs for a python reference spec (nullopt for other types).
std::optional<reference_inputs> python_reference_inputs(const kernel_spec& ref);
/// Timing (interleaved across `ks`) and profiler stages for kernels that passed correctness.
/// `reference`: checks the outputs of timed samples against its check trials (may be null).
void evaluate_performance(const std::vector<kernel_eval*>& ks, eval_context& ctx, const held_reference* reference);
/// Upstream Magpie's score: compile failed → 0; +0.5 correctness, +0.5 performance; perf skipped → 1.0.
void compute_score(kernel_eval& k);

struct run_outcome {
  json report;
  fs::path workspace, report_path;
  std::string console;  ///< stdout text (upstream Magpie's blocks, summary, "Workspace: ...")
  int exit_code = 0;
};

status_or<run_outcome> run_analyze(const eval_request& req);
status_or<run_outcome> run_compare(const eval_request& req);
/// Scale-out: evaluates only the reference (req.reference, else the baseline kernel) — compile
/// and correctness, no timing — into a workspace <output_dir>/reference_<id>_<ts>/ with
/// reference_report.json ({header, reference, manifest_dir, seeds, timing_seed}). Exit code 1
/// when the reference failed. With req.external_ref set, run_analyze / run_compare compare
/// against that manifest instead of evaluating a reference (every kernel, the baseline too).
status_or<run_outcome> run_reference_only(const eval_request& req);

}  // namespace magpie::kernel
