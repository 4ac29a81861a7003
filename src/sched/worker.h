// The job side of a batch: `magpie jobs run-task <job_dir>`, run by job.sh inside the Slurm
// allocation or as the Ray job's entrypoint. Evaluates the job's part of the request and writes <job_dir>/result.json:
//   {name, role, slurm_job_id, ray_submission_id, node, started, finished, magpie_version, exit_code, error,
//    workspace, report_file, [timed_indices, skipped]}
#pragma once

#include "core/fs.h"

namespace magpie::sched {

/// Returns the process exit code: the evaluation's (as `magpie analyze` / `compare` would
/// return it: 1 when a kernel of the job is not correct), 2 when the task could not be read.
int run_task(const fs::path& job_dir);

}  // namespace magpie::sched
