#include "sched/run_batch.h"

#include "core/log.h"
#include "sched/engine.h"

namespace magpie::sched {

int batch_run::exit_code() const {
  if (!waited) return 0;
  if (end == wait_end::interrupted) return 130;
  return collected.exit_code;
}

namespace {

// The engine for these options, checked (tools on PATH, dashboard answering) before anything is
// written, so a wrong cluster address leaves no half-made batch behind.
status_or<std::unique_ptr<engine>> checked_engine(const scheduler_options& so) {
  engine_kind kind = engine_kind::slurm;
  std::string ray_address;
  MAGPIE_RETURN_IF_ERROR(engine_for(so, &kind, &ray_address));
  MAGPIE_ASSIGN_OR_RETURN(auto e, make_engine(kind, ray_address));
  MAGPIE_RETURN_IF_ERROR(e->check());
  return e;
}

status_or<batch_run> submit_track_collect(batch& b, engine& e, bool wait, double poll_s) {
  MAGPIE_LOG_INFO("batch %s: %zu job(s) on %s", b.dir.c_str(), b.jobs.size(), e.name());
  MAGPIE_RETURN_IF_ERROR(submit_batch(b, e));
  batch_run run;
  if (!wait) {
    run.waited = false;
    for (const auto& j : b.jobs) run.deferred += j.deferred;
    run.planned = b;
    return run;
  }
  wait_options wo;
  wo.poll_s = poll_s;
  auto end = wait_batch(b, e, wo);
  if (!end.ok())
    return end.get_status().with_context("tracking batch " + b.dir.string() +
                                         " (nothing is lost: resume with 'magpie jobs collect " + b.dir.string() + "')");
  if (*end == wait_end::interrupted) MAGPIE_LOG_WARN("interrupted: collecting what the batch produced so far");
  run.end = *end;
  MAGPIE_ASSIGN_OR_RETURN(run.collected, collect_batch(b));
  run.planned = b;
  return run;
}

}  // namespace

status_or<batch_run> run_kernel_batch(const kernel::eval_request& req, const scheduler_options& so) {
  MAGPIE_ASSIGN_OR_RETURN(auto e, checked_engine(so));
  MAGPIE_ASSIGN_OR_RETURN(batch b, plan_kernel_batch(req, so));
  return submit_track_collect(b, *e, so.wait, so.poll_s);
}

status_or<batch_run> run_command_batch(const std::vector<std::string>& args, const scheduler_options& so,
                                       const fs::path& output_dir, bool needs_gpu) {
  MAGPIE_ASSIGN_OR_RETURN(auto e, checked_engine(so));
  MAGPIE_ASSIGN_OR_RETURN(batch b, plan_command_batch(args, so, output_dir, needs_gpu));
  return submit_track_collect(b, *e, so.wait, so.poll_s);
}

status_or<batch_run> track_and_collect(const fs::path& batch_dir, bool wait, bool cancel_on_signal) {
  MAGPIE_ASSIGN_OR_RETURN(batch b, batch::load(batch_dir));
  MAGPIE_ASSIGN_OR_RETURN(auto e, make_engine(b));
  batch_run run;
  if (wait) {
    MAGPIE_RETURN_IF_ERROR(e->check());
    wait_options wo;
    wo.cancel_on_signal = cancel_on_signal;
    MAGPIE_ASSIGN_OR_RETURN(run.end, wait_batch(b, *e, wo));
  } else if (auto st = e->check(); st.ok()) {
    if (auto r = refresh_batch(b, *e); !r.ok()) MAGPIE_LOG_WARN("%s", r.get_status().message().c_str());
  } else {
    MAGPIE_LOG_WARN("%s: merging the last recorded job states", st.message().c_str());
  }
  MAGPIE_ASSIGN_OR_RETURN(run.collected, collect_batch(b));
  run.planned = b;
  return run;
}

}  // namespace magpie::sched
