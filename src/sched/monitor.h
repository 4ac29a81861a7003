// Tracking a submitted batch: polling squeue/sacct until every job has ended, logging state
// changes, cancelling with scancel (on request, on Ctrl-C / SIGTERM / SIGHUP of the waiting
// magpie, and for jobs whose dependencies can never be satisfied).
#pragma once

#include <string>
#include <vector>

#include "sched/batch.h"

namespace magpie::sched {

/// One squeue/sacct round: updates every submitted job's `last` and saves batch.json. Jobs
/// the controller and accounting no longer know keep their last state, or take it from their
/// result.json (exit code 0 → COMPLETED, else FAILED). Returns the jobs whose state changed.
status_or<std::vector<std::string>> refresh_batch(batch& b, slurm_client& c, int lost_after_rounds = 10);

/// scancel the named jobs (empty: every job that has not ended).
status cancel_jobs(batch& b, slurm_client& c, const std::vector<std::string>& names);

struct wait_options {
  double poll_s = 2;         ///< seconds between rounds
  double timeout_s = 0;      ///< give up waiting after this long (0: never); jobs keep running
  double cancel_grace_s = 60;  ///< after Ctrl-C: how long to wait for cancelled jobs to end
  bool cancel_on_signal = true;  ///< false: a signal only stops waiting (jobs keep running)
  /// Unknown to squeue and sacct (and no result.json) for this many consecutive rounds: lost.
  int lost_after_rounds = 10;
};

enum class wait_end { finished, interrupted, timed_out };

/// Polls until every submitted job has ended (or is lost). The first SIGINT/SIGTERM/SIGHUP
/// cancels the batch's unfinished jobs (cancel_on_signal) and keeps polling until they have
/// ended (at most cancel_grace_s); a second one stops waiting at once.
status_or<wait_end> wait_batch(batch& b, slurm_client& c, const wait_options& o);

/// True when the job will not change any more: ended, never submitted, or lost.
bool job_settled(const job_record& j);

}  // namespace magpie::sched
