// Submit → track → collect of a batch on Slurm or Ray (the engine follows
// scheduler_options::environment). Results come back as data; src/cli prints them.
#pragma once

#include <string>
#include <vector>

#include "kernel/spec.h"
#include "sched/batch.h"
#include "sched/collect.h"
#include "sched/monitor.h"
#include "sched/options.h"

namespace magpie::sched {

/// What one batch run ended with.
struct batch_run {
  batch planned;                    ///< the batch as submitted (jobs, ids, directory)
  bool waited = true;               ///< false: submitted only (scheduler_options::wait false)
  size_t deferred = 0;              ///< Ray jobs that start once the jobs they follow have ended
  wait_end end = wait_end::finished;
  collect_outcome collected;        ///< the merged report; only when `waited`
  /// Process exit code: the collect's, 130 when interrupted, 0 when submitted only.
  int exit_code() const;
};

/// Checks the engine (Slurm tools, Ray dashboard: nothing is written when it fails), plans and
/// submits an analyze/compare batch; unless so.wait is false, tracks it to the end (Ctrl-C
/// cancels its jobs) and collects the merged report. Errors name what failed and how to resume.
status_or<batch_run> run_kernel_batch(const kernel::eval_request& req, const scheduler_options& so);
/// The same for one `magpie <args...>` command run as a job (e.g. a serving benchmark).
status_or<batch_run> run_command_batch(const std::vector<std::string>& args, const scheduler_options& so,
                                       const fs::path& output_dir, bool needs_gpu);

/// Tracks (unless `wait` is false) and collects an existing batch.
/// `cancel_on_signal`: Ctrl-C cancels the jobs (true) or only stops waiting (false).
status_or<batch_run> track_and_collect(const fs::path& batch_dir, bool wait, bool cancel_on_signal);

}  // namespace magpie::sched
