#include "cli/batch_cli.h"

#include <cstdio>

#include "core/strings.h"
#include "sched/merge.h"

namespace magpie::cli {

void add_scheduler_flags(arg_parser& p) {
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

status apply_scheduler_flags(const arg_parser& p, sched::scheduler_options* so) {
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

int print_batch_run(const status_or<sched::batch_run>& run, bool json_output) {
  if (!run.ok()) {
    std::fprintf(stderr, "Error: %s\n", run.get_status().message().c_str());
    return 1;
  }
  const sched::batch& b = run->planned;
  if (!run->waited) {
    std::printf("Submitted batch %s\n%s", b.dir.c_str(), sched::jobs_table(b).c_str());
    if (run->deferred > 0)
      std::printf("%zu job(s) start after others (Ray has no job dependencies): 'magpie jobs status' or 'magpie jobs "
                  "collect' submits them once those have ended.\n", run->deferred);
    std::printf("Track it with: magpie jobs status %s\nMerge it with: magpie jobs collect %s\n", b.dir.c_str(), b.dir.c_str());
    return run->exit_code();
  }
  const sched::collect_outcome& out = run->collected;
  if (json_output) std::fputs(dump_pretty(out.report.is_null() ? json::object() : out.report).c_str(), stdout);
  else std::fputs(out.console.c_str(), stdout);
  std::fflush(stdout);
  return run->exit_code();
}

}  // namespace magpie::cli
