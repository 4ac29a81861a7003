// magpie jobs list|status|cancel|collect|submit|run-task: Slurm and Ray batches (src/sched,
// docs/slurm.md, docs/ray.md). Each batch records its engine; the actions work for both.
#include <algorithm>
#include <cstdio>
#include <map>

#include "cli/batch_cli.h"
#include "cli/cli_common.h"
#include "cli/subcommand.h"
#include "core/args.h"
#include "core/json.h"
#include "core/log.h"
#include "core/strings.h"
#include "sched/batch.h"
#include "sched/collect.h"
#include "sched/engine.h"
#include "sched/merge.h"
#include "sched/monitor.h"
#include "sched/report_schema.h"
#include "sched/worker.h"

namespace magpie::cli {
namespace {

constexpr const char* k_jobs_usage =
    "usage: magpie jobs <action> [options]\n"
    "actions:\n"
    "  list                  batches under the shared directory, with their job states\n"
    "  status BATCH          per-job state of one batch (Slurm: squeue/sacct; Ray: the Jobs API)\n"
    "  cancel BATCH [JOB..]  cancel the batch's unfinished jobs (or the named ones): scancel / Ray stop\n"
    "  collect BATCH         wait for the batch, merge its jobs into one report, register it in the results store\n"
    "  submit [..] -- ARGS   run 'magpie ARGS' (e.g. benchmark ...) as one job (magpie -e ray jobs submit: on Ray)\n"
    "  run-task JOB_DIR      (internal) what each job's job.sh runs on its node\n"
    "BATCH is a batch directory or its name under the shared directory (default ./results/batches).\n"
    "Run 'magpie jobs <action> --help' for its options.\n";

int jobs_fail(const status& st) {
  std::fprintf(stderr, "magpie jobs: %s\n", st.message().c_str());
  return k_exit_failure;
}

void add_where_flags(arg_parser& p) {
  p.add_value("--shared-dir", "", "DIR", "where batches are (default <output-dir>/batches)")
      .add_value("--output-dir", "-o", "DIR", "output directory (default ./results)");
}

fs::path shared_dir_of(const arg_parser& p) {
  sched::scheduler_options so;
  so.shared_dir = p.value("--shared-dir");
  return sched::resolve_shared_dir(so, p.value("--output-dir", "results"));
}

fs::path resolve_batch(const arg_parser& p, const std::string& name) {
  std::error_code ec;
  if (fs::is_directory(name, ec)) return absolute_path(name);
  return shared_dir_of(p) / name;
}

// The engine of a loaded batch, checked; the error names the tools or the dashboard address.
status_or<std::unique_ptr<sched::engine>> engine_of(const sched::batch& b) {
  MAGPIE_ASSIGN_OR_RETURN(auto e, sched::make_engine(b));
  MAGPIE_RETURN_IF_ERROR(e->check());
  return e;
}

int run_jobs_list(const std::vector<std::string>& args) {
  arg_parser p("magpie jobs list",
               "List batches and the state of their jobs (as last recorded; add --refresh to ask Slurm / Ray).");
  add_where_flags(p);
  p.add_bool("--refresh", "", "ask the batch's engine about unfinished jobs first").add_bool("--json", "", "JSON on stdout");
  if (auto rc = parse_or_exit(p, args)) return *rc;
  fs::path root = shared_dir_of(p);
  json out = json::array();
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root, ec))
    if (e.is_directory() && fs::exists(e.path() / "batch.json")) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& d : dirs) {
    auto b = sched::batch::load(d);
    if (!b.ok()) continue;
    if (p.has("--refresh")) {
      auto e = engine_of(*b);
      if (e.ok()) (void)sched::refresh_batch(*b, **e);
      else MAGPIE_LOG_WARN("%s: %s", d.filename().c_str(), e.get_status().message().c_str());
    }
    std::map<std::string, int> states;
    for (const auto& j : b->jobs) states[sched::job_state_name(j.last.state)]++;
    std::string st;
    for (const auto& [k, v] : states) st += strprintf("%s%s=%d", st.empty() ? "" : " ", k.c_str(), v);
    out.push_back(sched::batch_list_row(*b));  // its schema: sched/report_schema.h
    if (!p.has("--json"))
      std::printf("%-40s %-6s %-8s %-21s %s%s\n", d.filename().c_str(), sched::engine_kind_name(b->engine), sched::batch_mode_name(b->mode), b->created.c_str(), st.c_str(),
                  b->collected.is_null() ? "" : "  (collected)");
  }
  if (p.has("--json")) std::fputs(dump_pretty(out).c_str(), stdout);
  else if (dirs.empty()) std::printf("no batches under %s\n", root.c_str());
  return k_exit_ok;
}

int run_status(const std::vector<std::string>& args) {
  arg_parser p("magpie jobs status",
               "Ask the batch's engine (Slurm: squeue/sacct; Ray: the dashboard's Jobs API) for the state of its jobs\n"
               "and print them. Ray batches: jobs waiting for others are submitted once those have ended.");
  p.add_positional("BATCH", "batch directory or name", false, true).add_bool("--json", "", "JSON on stdout");
  add_where_flags(p);
  if (auto rc = parse_or_exit(p, args)) return *rc;
  auto b = sched::batch::load(resolve_batch(p, p.positionals()[0]));
  if (!b.ok()) return jobs_fail(b.get_status());
  auto e = engine_of(*b);
  if (!e.ok()) return jobs_fail(e.get_status());
  if (auto r = sched::refresh_batch(*b, **e); !r.ok()) return jobs_fail(r.get_status());
  if (p.has("--json")) {
    std::fputs(dump_pretty(sched::batch_status_json(*b)).c_str(), stdout);  // schema: sched/report_schema.h
  } else {
    std::printf("batch %s (%s, %s)\n%s", b->dir.c_str(), sched::batch_mode_name(b->mode), sched::engine_kind_name(b->engine), sched::jobs_table(*b).c_str());
  }
  return k_exit_ok;
}

int run_cancel(const std::vector<std::string>& args) {
  arg_parser p("magpie jobs cancel",
               "Cancel a batch's unfinished jobs, or only the named ones (job name, Slurm id or Ray submission id):\n"
               "scancel on Slurm, POST /api/jobs/<id>/stop on Ray. Jobs not yet submitted are never submitted.");
  p.add_positional("BATCH", "batch directory or name", false, true).add_positional("JOB", "job names or ids", true);
  add_where_flags(p);
  if (auto rc = parse_or_exit(p, args)) return *rc;
  auto b = sched::batch::load(resolve_batch(p, p.positionals()[0]));
  if (!b.ok()) return jobs_fail(b.get_status());
  auto e = engine_of(*b);
  if (!e.ok()) return jobs_fail(e.get_status());
  (void)sched::refresh_batch(*b, **e);
  std::vector<std::string> names(p.positionals().begin() + 1, p.positionals().end());
  if (auto st = sched::cancel_jobs(*b, **e, names); !st.ok()) return jobs_fail(st);
  (void)sched::refresh_batch(*b, **e);
  std::fputs(sched::jobs_table(*b).c_str(), stdout);
  return k_exit_ok;
}

int run_collect(const std::vector<std::string>& args) {
  arg_parser p("magpie jobs collect",
               "Wait until every job of a batch has ended, merge them into one report (compare_report.json /\n"
               "analyze_report.json in a new workspace under the batch's output directory) and register it in\n"
               "the results store. Ctrl-C stops waiting; the jobs keep running (cancel them with 'magpie jobs cancel').");
  p.add_positional("BATCH", "batch directory or name", false, true)
      .add_bool("--no-wait", "", "merge now, reporting unfinished jobs as such")
      .add_bool("--json", "", "print the merged report JSON instead of the text summary");
  add_where_flags(p);
  if (auto rc = parse_or_exit(p, args)) return *rc;
  return print_batch_run(sched::track_and_collect(resolve_batch(p, p.positionals()[0]), !p.has("--no-wait"), false),
                         p.has("--json"));
}

int run_submit(const std::vector<std::string>& args, const global_options& g) {
  arg_parser p("magpie jobs submit",
               "Run one magpie command line as a Slurm job (or a Ray job with 'magpie -e ray jobs submit'), e.g.\n"
               "  magpie jobs submit --gpu --time-limit 2:00:00 -- benchmark vllm -m MODEL --concurrency 32\n"
               "The job gets -o <job dir>/results unless the command names an output directory; its workspaces\n"
               "are registered in the results store when it ends.");
  p.add_positional("ARGS", "the magpie arguments (after --)", true, true)
      .add_bool("--gpu", "", "the command needs a GPU: request --gres (default gpu:1) / Ray entrypoint_num_gpus (default 1)")
      .add_value("--output-dir", "-o", "DIR", "results directory of the submitting side (store; default ./results)")
      .add_bool("--json", "", "machine-readable output");
  add_scheduler_flags(p);
  if (auto rc = parse_or_exit(p, args)) return *rc;
  sched::scheduler_options so;
  auto env = sched::environment_from_flag(g.environment);
  if (!env.ok()) return jobs_fail(env.get_status());
  so.environment = env->value_or(sched::run_environment::slurm);
  if (so.environment != sched::run_environment::slurm && so.environment != sched::run_environment::ray)
    return jobs_fail(invalid_argument("jobs submit runs on slurm or ray, not '%s' (magpie -e slurm|ray jobs submit)",
                                 sched::run_environment_name(*so.environment)));
  if (auto st = apply_scheduler_flags(p, &so); !st.ok()) return jobs_fail(st);
  return print_batch_run(sched::run_command_batch(p.positionals(), so, p.value("--output-dir", "results"), p.has("--gpu")),
                         p.has("--json"));
}

int run_jobs(const std::vector<std::string>& args, const global_options& g) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::fputs(k_jobs_usage, args.empty() ? stderr : stdout);
    return args.empty() ? k_exit_usage : k_exit_ok;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  const std::string& a = args[0];
  if (a == "list") return run_jobs_list(rest);
  if (a == "status") return run_status(rest);
  if (a == "cancel") return run_cancel(rest);
  if (a == "collect") return run_collect(rest);
  if (a == "submit") return run_submit(rest, g);
  if (a == "run-task") {
    if (rest.size() != 1) {
      std::fprintf(stderr, "usage: magpie jobs run-task JOB_DIR\n");
      return k_exit_usage;
    }
    return sched::run_task(rest[0]);
  }
  return unknown_action("magpie jobs", a, {"list", "status", "cancel", "collect", "submit", "run-task"}, k_jobs_usage);
}

}  // namespace
MAGPIE_SUBCOMMAND(jobs, "jobs", "Slurm and Ray batches: list, status, cancel, collect, submit", run_jobs);
}  // namespace magpie::cli
