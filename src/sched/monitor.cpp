#include "sched/monitor.h"

#include <chrono>
#include <map>
#include <thread>

#include "core/log.h"
#include "core/progress.h"
#include "core/signal_capture.h"
#include "core/strings.h"
#include "sched/engine.h"
#include "sched/job_results.h"

namespace magpie::sched {

namespace {

constexpr const char* k_lost = "lost: unknown to the scheduler";

// A job squeue and sacct have both forgotten: its own result.json says how it ended.
bool state_from_result(job_record& j) {
  auto r = read_job_result(j.dir);
  if (!r.ok()) return false;
  int code = r->value("exit_code", 1);
  j.last.state = code == 0 ? job_state::completed : job_state::failed;
  j.last.exit_status = code;
  j.last.source = "result.json";
  if (j.last.nodes.empty()) j.last.nodes = r->value("node", "");
  return true;
}

}  // namespace

bool job_settled(const job_record& j) {
  if (j.job_id.empty()) return !j.deferred;
  return is_terminal(j.last.state) || j.last.reason == k_lost;
}

status_or<std::vector<std::string>> refresh_batch(batch& b, engine& c, int lost_after_rounds) {
  std::vector<std::string> ids;
  for (const auto& j : b.jobs)
    if (!j.job_id.empty() && !is_terminal(j.last.state) && j.last.reason != k_lost) ids.push_back(j.job_id);
  std::vector<std::string> changed;
  std::map<std::string, job_info> infos;
  if (!ids.empty()) {
    MAGPIE_ASSIGN_OR_RETURN(infos, c.query(ids));
  }
  for (auto& j : b.jobs) {
    auto it = infos.find(j.job_id);
    if (it == infos.end()) continue;
    job_info info = it->second;
    job_state before = j.last.state;
    std::string before_nodes = j.last.nodes;
    if (info.state == job_state::unknown) {
      if (!state_from_result(j) && ++j.unknown_rounds >= lost_after_rounds) j.last.reason = k_lost;
    } else {
      j.unknown_rounds = 0;
      j.last = info;
      if (j.last.name.empty()) j.last.name = "magpie-" + j.name;
    }
    if (j.last.state != before || j.last.nodes != before_nodes || j.last.reason == k_lost) changed.push_back(j.name);
    if (is_terminal(j.last.state) && !is_terminal(before)) c.save_log(j);
  }
  if (!changed.empty()) MAGPIE_RETURN_IF_ERROR(b.save());
  // Engines without dependencies (Ray): jobs whose `after` jobs have now ended go in.
  if (!c.native_dependencies()) {
    MAGPIE_ASSIGN_OR_RETURN(auto submitted, submit_ready(b, c));
    changed.insert(changed.end(), submitted.begin(), submitted.end());
  }
  return changed;
}

status cancel_jobs(batch& b, engine& c, const std::vector<std::string>& names) {
  std::vector<std::string> ids;
  bool unsubmitted = false;
  for (auto& j : b.jobs) {
    bool named = names.empty();
    for (const auto& n : names) named = named || n == j.name || n == j.job_id;
    if (named && !j.job_id.empty() && !is_terminal(j.last.state)) ids.push_back(j.job_id);
    if (named && j.deferred && j.job_id.empty()) {  // waiting for its dependencies: never submitted now
      j.deferred = false;
      j.submit_error = "cancelled before it was submitted";
      j.last.state = job_state::cancelled;
      unsubmitted = true;
    }
  }
  if (unsubmitted) MAGPIE_RETURN_IF_ERROR(b.save());
  for (const auto& n : names)
    if (!b.find(n)) {
      bool by_id = false;
      for (const auto& j : b.jobs) by_id = by_id || j.job_id == n;
      if (!by_id) return not_found("no job '%s' in batch %s", n.c_str(), b.dir.c_str());
    }
  if (ids.empty()) return ok_status();
  MAGPIE_LOG_INFO("cancelling %s job(s) %s", c.name(), join(ids, " ").c_str());
  return c.cancel(ids);
}

namespace {

void log_changes(const batch& b, const std::vector<std::string>& names) {
  for (const auto& n : names) {
    const job_record* j = b.find(n);
    if (!j) continue;
    std::string extra;
    if (!j->last.nodes.empty()) extra += " on " + j->last.nodes;
    if (!j->last.reason.empty()) extra += " (" + j->last.reason + ")";
    if (is_terminal(j->last.state) && j->last.exit_status >= 0) extra += strprintf(", exit %d", j->last.exit_status);
    if (j->job_id.empty()) continue;  // a deferred job submitted this round: submit_batch logged it
    MAGPIE_LOG_INFO("[%s] %s job %s: %s%s", j->name.c_str(), engine_kind_name(j->engine), j->job_id.c_str(),
                    job_state_name(j->last.state), extra.c_str());
  }
}

// Jobs whose dependency can never be satisfied would stay PENDING for ever.
void cancel_stuck(batch& b, engine& c) {
  std::vector<std::string> stuck;
  for (const auto& j : b.jobs)
    if (j.last.state == job_state::pending && contains(j.last.reason, "DependencyNeverSatisfied")) stuck.push_back(j.name);
  if (stuck.empty()) return;
  MAGPIE_LOG_WARN("cancelling job(s) whose dependencies can never be satisfied: %s", join(stuck, ", ").c_str());
  if (auto st = cancel_jobs(b, c, stuck); !st.ok()) MAGPIE_LOG_WARN("%s", st.message().c_str());
}

// sacct records a job's end a little after squeue shows it: ask again (a few times) for ended
// jobs that only squeue has described, so the report carries accounting's view too.
void reconcile_with_accounting(batch& b, engine& c) {
  for (int round = 0; round < 5 && c.confirms_late(); ++round) {
    std::vector<std::string> ids;
    for (const auto& j : b.jobs)
      if (!j.job_id.empty() && is_terminal(j.last.state) && !contains(j.last.source, "sacct")) ids.push_back(j.job_id);
    if (ids.empty()) return;
    if (round > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    auto infos = c.query(ids);
    if (!infos.ok()) return;
    for (auto& j : b.jobs) {
      auto it = infos->find(j.job_id);
      if (it != infos->end() && is_terminal(it->second.state)) j.last = it->second;
    }
    (void)b.save();
  }
}

}  // namespace

status_or<wait_end> wait_batch(batch& b, engine& c, const wait_options& o) {
  signal_capture signals;
  progress_bar bar(std::string(c.name()) + " jobs", b.jobs.size());
  const double t0 = monotonic_seconds();
  double cancel_deadline = 0;
  int failures = 0;
  while (true) {
    auto changed = refresh_batch(b, c, o.lost_after_rounds);
    if (!changed.ok()) {
      MAGPIE_LOG_WARN("tracking: %s (retrying)", changed.get_status().message().c_str());
      if (++failures >= 30) return changed.get_status();
    } else {
      failures = 0;
      log_changes(b, *changed);
      cancel_stuck(b, c);
    }
    size_t settled = 0;
    for (const auto& j : b.jobs) settled += job_settled(j);
    bar.set(settled);
    bar.set_note(strprintf("%zu/%zu ended", settled, b.jobs.size()));
    if (settled == b.jobs.size()) {
      reconcile_with_accounting(b, c);
      bar.finish();
      return cancel_deadline > 0 ? wait_end::interrupted : wait_end::finished;
    }
    if (signal_capture::last_signal() && !o.cancel_on_signal) {
      bar.finish();
      MAGPIE_LOG_WARN("interrupted (signal %d): stopped waiting; the jobs keep running", signal_capture::last_signal());
      return wait_end::interrupted;
    }
    if (signal_capture::last_signal() && cancel_deadline == 0) {
      MAGPIE_LOG_WARN("interrupted (signal %d): cancelling the batch's unfinished jobs", signal_capture::last_signal());
      if (auto st = cancel_jobs(b, c, {}); !st.ok()) MAGPIE_LOG_WARN("%s", st.message().c_str());
      cancel_deadline = monotonic_seconds() + o.cancel_grace_s;
    }
    if (signal_capture::count() >= 2 || (cancel_deadline > 0 && monotonic_seconds() > cancel_deadline)) {
      bar.finish();
      return wait_end::interrupted;
    }
    if (o.timeout_s > 0 && monotonic_seconds() - t0 > o.timeout_s) {
      bar.finish();
      return wait_end::timed_out;
    }
    const double until = monotonic_seconds() + (cancel_deadline > 0 ? 0.5 : o.poll_s);
    int seen = signal_capture::count();
    while (monotonic_seconds() < until && signal_capture::count() == seen)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace magpie::sched
