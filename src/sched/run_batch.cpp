#include "sched/run_batch.h"

#include <cstdio>

#include "core/log.h"
#include "core/strings.h"
#include "sched/batch.h"
#include "sched/collect.h"
#include "sched/engine.h"
#include "sched/merge.h"
#include "sched/monitor.h"

namespace magpie::sched {

void add_slurm_flags(arg_parser& p) {
  const std::string g = "scheduler (slurm / ray: with -e slurm|ray or scheduler.environment)";
  p.add_value("--partition", "", "NAME", "sbatch --partition (default: the cluster's default partition)", {}, g);
  p.add_value("--account", "", "NAME", "sbatch --account", {}, g);
  p.add_value("--qos", "", "NAME", "sbatch --qos", {}, g);
  p.add_value("--gres", "", "SPEC", "GPU request of jobs with GPU kernels (default gpu:1; host kernels get none)", {}, g);
  p.add_value("--time-limit", "", "TIME", "time limit per job: minutes, MM:SS, HH:MM:SS or D-HH:MM:SS (default 00:30:00; Ray: enforced with timeout(1))", {}, g);
  p.add_value("--mem", "", "SIZE", "sbatch --mem per job, e.g. 16G (default: the cluster's)", {}, g);
  p.add_value("--cpus-per-task", "", "N", "sbatch --cpus-per-task; Ray: entrypoint_num_cpus unless ray_config sets it (default 1)", {}, g);
  p.add_value("--shared-dir", "", "DIR", "batch directory root visible from every node (default <output-dir>/batches)", {}, g);
  p.add_value("--magpie-bin", "", "PATH", "magpie executable on the nodes (default: this binary)", {}, g);
  p.add_multi("--sbatch-arg", "", "ARG", "extra sbatch argument, verbatim (use --sbatch-arg=--exclusive for dashes)", g);
  p.add_bool("--no-wait", "", "submit and return; track and merge later with 'magpie jobs collect BATCH'", g);
  p.add_value("--ray-address", "", "URL", "Ray dashboard (Jobs API), e.g. http://head:8265 (default: ray_config.cluster_address, "
              "$RAY_API_SERVER_ADDRESS, else http://127.0.0.1:8265)", {}, g);
  p.add_value("--ray-num-gpus", "", "N", "Ray entrypoint_num_gpus of jobs with GPU kernels (default 1; host kernels reserve none)", {}, g);
}

status apply_slurm_flags(const arg_parser& p, kernel::scheduler_options* so) {
  for (auto [flag, dst] : {std::pair{"--partition", &so->partition}, {"--account", &so->account}, {"--qos", &so->qos},
                           {"--gres", &so->gres}, {"--time-limit", &so->time_limit}, {"--mem", &so->mem},
                           {"--shared-dir", &so->shared_dir}, {"--magpie-bin", &so->magpie_bin}})
    if (p.has(flag)) *dst = p.value(flag);
  if (p.has("--cpus-per-task")) {
    MAGPIE_ASSIGN_OR_RETURN(int64_t n, p.integer("--cpus-per-task", 1));
    if (n < 1) return invalid_argument("--cpus-per-task must be >= 1");
    so->cpus_per_task = static_cast<int>(n);
  }
  for (const auto& a : p.values("--sbatch-arg"))
    if (!a.empty()) so->sbatch_args.push_back(a);
  if (p.has("--no-wait")) so->wait = false;
  if (p.has("--ray-address")) so->ray.cluster_address = p.value("--ray-address");
  if (p.has("--ray-num-gpus")) {
    MAGPIE_ASSIGN_OR_RETURN(double n, p.number("--ray-num-gpus", 1));
    if (n < 0) return invalid_argument("--ray-num-gpus must be >= 0");
    so->ray.entrypoint_num_gpus = n;
  }
  return ok_status();
}

status check_environment(const std::string& env) {
  if (env.empty() || env == "local" || env == "slurm" || env == "ray") return ok_status();
  if (env == "container")
    return error(status_code::failed_precondition,
                 "the container environment is not provided (Magpie's own ContainerExecutor is a stub); run magpie "
                 "inside the container, or use -e slurm / -e ray / -e local");
  return invalid_argument("unknown environment '%s' (local, slurm, ray)", env.c_str());
}

namespace {

int fail(const status& st) {
  std::fprintf(stderr, "Error: %s\n", st.message().c_str());
  return 1;
}

int report_and_exit(const collect_outcome& out, bool json_output, wait_end end) {
  if (json_output) std::fputs(dump_pretty(out.report.is_null() ? json::object() : out.report).c_str(), stdout);
  else std::fputs(out.console.c_str(), stdout);
  std::fflush(stdout);
  if (end == wait_end::interrupted) return 130;
  return out.exit_code;
}

// The engine for these options, checked (tools on PATH, dashboard answering) before anything is
// written, so a wrong cluster address leaves no half-made batch behind.
status_or<std::unique_ptr<engine>> checked_engine(const kernel::scheduler_options& so) {
  std::string name;
  json config;
  MAGPIE_RETURN_IF_ERROR(engine_for(so, &name, &config));
  MAGPIE_ASSIGN_OR_RETURN(auto e, make_engine(name, config));
  MAGPIE_RETURN_IF_ERROR(e->check());
  return e;
}

int submit_track_collect(batch& b, engine& e, bool wait, bool json_output, double poll_s) {
  MAGPIE_LOG_INFO("batch %s: %zu job(s) on %s", b.dir.c_str(), b.jobs.size(), e.name());
  if (auto st = submit_batch(b, e); !st.ok()) return fail(st);
  if (!wait) {
    std::printf("Submitted batch %s\n%s", b.dir.c_str(), jobs_table(b).c_str());
    size_t deferred = 0;
    for (const auto& j : b.jobs) deferred += j.deferred;
    if (deferred > 0)
      std::printf("%zu job(s) start after others (Ray has no job dependencies): 'magpie jobs status' or 'magpie jobs "
                  "collect' submits them once those have ended.\n", deferred);
    std::printf("Track it with: magpie jobs status %s\nMerge it with: magpie jobs collect %s\n", b.dir.c_str(), b.dir.c_str());
    return 0;
  }
  wait_options wo;
  wo.poll_s = poll_s;
  auto end = wait_batch(b, e, wo);
  if (!end.ok())
    return fail(end.get_status().with_context("tracking batch " + b.dir.string() +
                                              " (nothing is lost: resume with 'magpie jobs collect " + b.dir.string() + "')"));
  if (*end == wait_end::interrupted) MAGPIE_LOG_WARN("interrupted: collecting what the batch produced so far");
  auto out = collect_batch(b);
  if (!out.ok()) return fail(out.get_status());
  return report_and_exit(*out, json_output, *end);
}

}  // namespace

int run_kernel_batch(const kernel::eval_request& req, bool json_output) {
  auto e = checked_engine(req.scheduler);
  if (!e.ok()) return fail(e.get_status());
  auto b = plan_kernel_batch(req);
  if (!b.ok()) return fail(b.get_status());
  return submit_track_collect(*b, **e, req.scheduler.wait, json_output, req.scheduler.poll_s);
}

int run_command_batch(const std::vector<std::string>& args, const kernel::scheduler_options& so,
                      const fs::path& output_dir, bool needs_gpu, bool json_output) {
  auto e = checked_engine(so);
  if (!e.ok()) return fail(e.get_status());
  auto b = plan_command_batch(args, so, output_dir, needs_gpu);
  if (!b.ok()) return fail(b.get_status());
  return submit_track_collect(*b, **e, so.wait, json_output, so.poll_s);
}

int track_and_collect(const fs::path& batch_dir, bool wait, bool cancel_on_signal, bool json_output) {
  auto b = batch::load(batch_dir);
  if (!b.ok()) return fail(b.get_status());
  auto e = make_engine(*b);
  if (!e.ok()) return fail(e.get_status());
  wait_end end = wait_end::finished;
  if (wait) {
    if (auto st = (*e)->check(); !st.ok()) return fail(st);
    wait_options wo;
    wo.cancel_on_signal = cancel_on_signal;
    auto w = wait_batch(*b, **e, wo);
    if (!w.ok()) return fail(w.get_status());
    end = *w;
  } else if (auto st = (*e)->check(); st.ok()) {
    if (auto r = refresh_batch(*b, **e); !r.ok()) MAGPIE_LOG_WARN("%s", r.get_status().message().c_str());
  } else {
    MAGPIE_LOG_WARN("%s: merging the last recorded job states", st.message().c_str());
  }
  auto out = collect_batch(*b);
  if (!out.ok()) return fail(out.get_status());
  return report_and_exit(*out, json_output, end);
}

}  // namespace magpie::sched
