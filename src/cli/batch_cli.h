// The scheduler flags (Slurm / Ray) shared by analyze, compare, benchmark and jobs, and how a
// batch run is shown: text (or the merged report's JSON) on stdout, errors on stderr.
#pragma once

#include "core/args.h"
#include "sched/run_batch.h"

namespace magpie::cli {

/// Adds --partition, --account, --qos, --gres, --time-limit, --mem, --cpus-per-task,
/// --shared-dir, --magpie-bin, --sbatch-arg, --no-wait, --ray-address and --ray-num-gpus.
void add_scheduler_flags(arg_parser& p);
/// Applies the flags given on the command line over `so` (CLI > kernel YAML > framework config).
status apply_scheduler_flags(const arg_parser& p, sched::scheduler_options* so);

/// Prints a batch run (or its error, exit 1) and returns the process exit code: submitted only:
/// the jobs table and how to track them; otherwise the collect's console text, or the merged
/// report JSON when `json_output`.
int print_batch_run(const status_or<sched::batch_run>& run, bool json_output);

}  // namespace magpie::cli
