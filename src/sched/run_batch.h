// Entry points used by the CLI: the scheduler flags, and submit → track → collect of a batch
// on Slurm or Ray (the engine follows scheduler_options::environment).
#pragma once

#include <string>
#include <vector>

#include "core/args.h"
#include "kernel/spec.h"

namespace magpie::sched {

/// Adds --partition, --account, --qos, --gres, --time-limit, --mem, --cpus-per-task,
/// --shared-dir, --magpie-bin, --sbatch-arg, --no-wait, --ray-address and --ray-num-gpus.
void add_slurm_flags(arg_parser& p);
/// Applies the flags given on the command line over `so` (CLI > kernel YAML > framework config).
status apply_slurm_flags(const arg_parser& p, kernel::scheduler_options* so);
/// Ok for "", local, slurm and ray; container is Magpie's stub environment, not provided (the
/// error says so).
status check_environment(const std::string& env);

/// Checks the engine (Slurm tools, Ray dashboard: nothing is written when it fails), plans and
/// submits an analyze/compare batch; unless req.scheduler.wait is false, tracks it
/// to the end (Ctrl-C cancels its jobs), collects the merged report and prints it (text, or
/// the report JSON when `json_output`). Returns the process exit code (130 when interrupted).
int run_kernel_batch(const kernel::eval_request& req, bool json_output);
/// The same for one `magpie <args...>` command run as a job (e.g. a serving benchmark).
int run_command_batch(const std::vector<std::string>& args, const kernel::scheduler_options& so,
                      const fs::path& output_dir, bool needs_gpu, bool json_output);

/// Tracks (unless `wait` is false) and collects an existing batch; prints like run_kernel_batch.
/// `cancel_on_signal`: Ctrl-C cancels the jobs (true) or only stops waiting (false).
int track_and_collect(const fs::path& batch_dir, bool wait, bool cancel_on_signal, bool json_output);

}  // namespace magpie::sched
