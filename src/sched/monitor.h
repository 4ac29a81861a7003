// Tracking a submitted batch through its engine (Slurm: squeue/sacct, scancel; Ray: the Jobs
// API) until every job has ended, logging state changes, submitting deferred jobs (Ray),
// cancelling (on request, on Ctrl-C / SIGTERM / SIGHUP of the waiting magpie, and for Slurm
// jobs whose dependencies can never be satisfied).
#pragma once

#include <string>
#include <vector>

#include "sched/batch.h"

namespace magpie::sched {

class engine;

/// One query round: updates every submitted job's `last` and saves batch.json. Jobs the
/// engine no longer knows keep their last state, or take it from their result.json (exit
/// code 0 → COMPLETED, else FAILED). Ended jobs get their log saved (engine::save_log); deferred
/// jobs whose dependencies have ended are submitted. Returns the jobs whose state changed.
status_or<std::vector<std::string>> refresh_batch(batch& b, engine& c, int lost_after_rounds = 10);

/// Cancels the named jobs (empty: every job that has not ended); deferred jobs among them are
/// never submitted (state CANCELLED).
status cancel_jobs(batch& b, engine& c, const std::vector<std::string>& names);

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
status_or<wait_end> wait_batch(batch& b, engine& c, const wait_options& o);

}  // namespace magpie::sched
