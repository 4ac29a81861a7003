// Slurm job states (squeue %T / sacct State names) and what they mean for a batch.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace magpie::sched {

enum class job_state {
  unknown,        ///< not (yet, or no longer) known to squeue or sacct
  not_submitted,  ///< planned, sbatch not run (or it failed)
  pending,
  configuring,
  running,
  suspended,
  completing,
  requeued,
  completed,
  failed,
  timeout,
  cancelled,
  node_fail,
  out_of_memory,
  preempted,
  boot_fail,
  deadline,
  revoked,
  special_exit,
};

/// Parses squeue/sacct state text: full names ("CANCELLED by 1000" → cancelled, "RUNNING"),
/// squeue's compact codes ("PD", "R", "CG", "CD", "F", "TO", "CA", "NF", "OOM", ...), any case.
/// Unrecognised text → unknown.
job_state parse_job_state(std::string_view text);
/// Slurm's name ("PENDING", "OUT_OF_MEMORY"); "UNKNOWN" and "NOT_SUBMITTED" for ours.
const char* job_state_name(job_state s);
/// Every job_state_name word (the schema enum of job rows).
std::vector<std::string> job_state_names();
/// True when the job will not run (again): completed, failed, timeout, cancelled, node_fail,
/// out_of_memory, preempted, boot_fail, deadline, revoked, special_exit.
bool is_terminal(job_state s);
/// True only for completed (exit code 0 of the batch script).
inline bool is_success(job_state s) { return s == job_state::completed; }

}  // namespace magpie::sched
