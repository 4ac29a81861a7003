#include "sched/run_batch.h"

#include <cstdio>

#include "core/log.h"
#include "core/strings.h"
#include "sched/batch.h"
#include "sched/collect.h"
#include "sched/merge.h"
#include "sched/monitor.h"

namespace magpie::sched {

void add_slurm_flags(arg_parser& p) {
  const std::string g = "scheduler (slurm: with -e slurm or scheduler.environment: slurm)";
  p.add_value("--partition", "", "NAME", "sbatch --partition (default: the cluster's default partition)", {}, g);
  p.add_value("--account", "", "NAME", "sbatch --account", {}, g);
  p.add_value("--qos", "", "NAME", "sbatch --qos", {}, g);
  p.add_value("--gres", "", "SPEC", "GPU request of jobs with GPU kernels (default gpu:1; host kernels get none)", {}, g);
  p.add_value("--time-limit", "", "TIME", "sbatch --time per job: minutes, MM:SS, HH:MM:SS or D-HH:MM:SS (default 00:30:00)", {}, g);
  p.add_value("--mem", "", "SIZE", "sbatch --mem per job, e.g. 16G (default: the cluster's)", {}, g);
  p.add_value("--cpus-per-task", "", "N", "sbatch --cpus-per-task (default 1)", {}, g);
  p.add_value("--shared-dir", "", "DIR", "batch directory root visible from every node (default <output-dir>/batches)", {}, g);
  p.add_value("--magpie-bin", "", "PATH", "magpie executable on the nodes (default: this binary)", {}, g);
  p.add_multi("--sbatch-arg", "", "ARG", "extra sbatch argument, verbatim (use --sbatch-arg=--exclusive for dashes)", g);
  p.add_bool("--no-wait", "", "submit and return; track and merge later with 'magpie jobs collect BATCH'", g);
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
  return ok_status();
}

status check_environment(const std::string& env) {
  if (env.empty() || env == "local" || env == "slurm") return ok_status();
  if (env == "ray")
    return error(status_code::failed_precondition,
                 "the ray environment (ray job submit) is not provided by this build: Ray cannot be installed and "
                 "verified here; use -e slurm for a cluster or -e local (docs/slurm.md)");
  if (env == "container")
    return error(status_code::failed_precondition,
                 "the container environment is not provided (Magpie's own ContainerExecutor is a stub); run magpie "
                 "inside the container, or use -e slurm / -e local");
  return invalid_argument("unknown environment '%s' (local, slurm)", env.c_str());
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

int submit_track_collect(batch& b, bool wait, bool json_output, double poll_s) {
  if (auto st = check_slurm_tools(); !st.ok()) return fail(st);
  slurm_client client;
  MAGPIE_LOG_INFO("batch %s: %zu job(s)", b.dir.c_str(), b.jobs.size());
  if (auto st = submit_batch(b, client); !st.ok()) return fail(st);
  if (!wait) {
    std::printf("Submitted batch %s\n%s\nTrack it with: magpie jobs status %s\nMerge it with: magpie jobs collect %s\n",
                b.dir.c_str(), jobs_table(b).c_str(), b.dir.c_str(), b.dir.c_str());
    return 0;
  }
  wait_options wo;
  wo.poll_s = poll_s;
  auto end = wait_batch(b, client, wo);
  if (!end.ok()) return fail(end.get_status());
  if (*end == wait_end::interrupted) MAGPIE_LOG_WARN("interrupted: collecting what the batch produced so far");
  auto out = collect_batch(b);
  if (!out.ok()) return fail(out.get_status());
  return report_and_exit(*out, json_output, *end);
}

}  // namespace

int run_kernel_batch(const kernel::eval_request& req, bool json_output) {
  auto b = plan_kernel_batch(req);
  if (!b.ok()) return fail(b.get_status());
  return submit_track_collect(*b, req.scheduler.wait, json_output, req.scheduler.poll_s);
}

int run_command_batch(const std::vector<std::string>& args, const kernel::scheduler_options& so,
                      const fs::path& output_dir, bool needs_gpu, bool json_output) {
  auto b = plan_command_batch(args, so, output_dir, needs_gpu);
  if (!b.ok()) return fail(b.get_status());
  return submit_track_collect(*b, so.wait, json_output, so.poll_s);
}

int track_and_collect(const fs::path& batch_dir, bool wait, bool cancel_on_signal, bool json_output) {
  auto b = batch::load(batch_dir);
  if (!b.ok()) return fail(b.get_status());
  slurm_client client;
  wait_end end = wait_end::finished;
  if (wait) {
    if (auto st = check_slurm_tools(); !st.ok()) return fail(st);
    wait_options wo;
    wo.cancel_on_signal = cancel_on_signal;
    auto e = wait_batch(*b, client, wo);
    if (!e.ok()) return fail(e.get_status());
    end = *e;
  } else if (check_slurm_tools().ok()) {
    if (auto r = refresh_batch(*b, client); !r.ok()) MAGPIE_LOG_WARN("%s", r.get_status().message().c_str());
  }
  auto out = collect_batch(*b);
  if (!out.ok()) return fail(out.get_status());
  return report_and_exit(*out, json_output, end);
}

}  // namespace magpie::sched
