// magpie optimize -c optimize.yaml: the optimization loop (src/optimize) as one command.
#include <cstdio>

#include "cli/cli_common.h"
#include "cli/subcommand.h"
#include "core/args.h"
#include "core/log.h"
#include "core/strings.h"
#include "core/workspace.h"
#include "optimize/config_printer.h"
#include "optimize/loop.h"
#include "optimize/report_printer.h"
#include "optimize/measure.h"
#include "serve/bench_config_codec.h"

namespace magpie::cli {
namespace {

constexpr const char* k_epilog =
    "Steps: start_server, calibrate, baseline_benchmarks, profiled_run, trace_analysis, choose_kernel, compare,\n"
    "switch_in, after_benchmarks, inputs_check, e2e (docs/optimization-loop.md). Each step's outputs and every\n"
    "command's log stay in the workspace; the report is rewritten after each step.\n"
    "End to end: baseline (A) and candidate (B) runs alternate (abba: A B B A ...; abab), every server is warmed\n"
    "by a discarded pass after it starts, at least e2e.pairs runs a side (more, up to e2e.max_pairs, until the\n"
    "smallest detectable change is at most e2e.target_mde_pct); Welch's test and magpie results compare must agree.\n"
    "--control aa runs the candidate side with the baseline variant: it must come out within noise.\n"
    "Exit status: 0 the loop finished (improved, paused by --until, or stopped for a reason in the report); 1 a step failed, or an\n"
    "A/A control came out beyond noise; 2 usage or configuration error. SIGINT/SIGTERM end the current step,\n"
    "stop every server the loop started and still write the report.\n"
    "Examples:\n"
    "  magpie optimize -c examples/loop/optimize_cpu.yaml -o /tmp/opt\n"
    "  magpie optimize -c examples/loop/optimize.yaml --workspace /tmp/opt_aa --resume /tmp/opt/optimize_x \\\n"
    "      --from-step switch_in --control aa";

arg_parser make_optimize_parser() {
  arg_parser p("magpie optimize", "Run the optimization loop: benchmark, profile, analyse, map to source, compare candidates "
                                   "with a correctness gate, switch the winner in, re-measure end to end.");
  p.add_value("--config", "-c", "FILE", "optimize.yaml (required; see docs/optimization-loop.md)")
      .add_value("--output-dir", "-o", "DIR", "a new workspace optimize_<name>_<time> is created here (default ./results)")
      .add_value("--workspace", "", "DIR", "use exactly this directory as the workspace (created when missing)")
      .add_value("--from-step", "", "STEP", "resume: keep the steps before STEP from the earlier report and run the rest")
      .add_value("--until", "", "STEP", "stop after STEP (outcome paused), e.g. choose_kernel to write candidates first")
      .add_value("--resume", "", "DIR", "workspace whose loop_report.json provides the kept steps (default: --workspace)")
      .add_value("--control", "", "MODE", "none | aa: A/A control, the candidate side runs the baseline variant", {"none", "aa"})
      .add_value("--pairs", "", "N", "runs per side at least (e2e.pairs; >= 2)")
      .add_value("--max-pairs", "", "N", "runs per side at most (e2e.max_pairs)")
      .add_value("--target-mde-pct", "", "PCT", "add pairs (up to --max-pairs) until the smallest detectable change of the "
                                                  "first decision metric is at most PCT percent (e2e.target_mde_pct; 0 = off)")
      .add_value("--max-series-s", "", "S", "time budget of the series, seconds: a pair beyond --pairs starts only while "
                                            "the seconds so far plus the longest pair fit (e2e.max_series_s; 0 = none)")
      .add_value("--order", "", "ORDER", "abba | abab (e2e.order)", {"abba", "abab"})
      .add_value("--servers", "", "MODE", "restart | concurrent (e2e.servers)", {"restart", "concurrent"})
      .add_value("--alpha", "", "A", "significance level of the end-to-end tests (decision.alpha, e.g. 0.01)")
      .add_value("--num-prompts", "", "N", "prompts per measured run (skips calibration; workload.num_prompts)")
      .add_value("--concurrency", "", "N", "requests in flight (workload.max_concurrency)")
      .add_value("--compare-max-time", "", "S", "magpie compare --max-time, seconds (compare.max_time_s; default 6)")
      .add_value("--ready-timeout", "", "S", "server start-up limit, seconds (server.ready_timeout_s; default 420)")
      .add_value("--python", "", "PY", "value of {python} in the server command (default $MAGPIE_PYTHON, else python3)")
      .add_bool("--dry-run", "", "print the resolved configuration and the server commands, run nothing")
      .set_epilog(k_epilog);
  return p;
}

status apply_overrides(const arg_parser& p, optimize::optimize_config& c) {
  if (p.has("--control")) c.e2e.control = p.value("--control");
  if (p.has("--order")) c.e2e.order = p.value("--order");
  if (p.has("--servers")) c.e2e.servers = p.value("--servers");
  if (p.has("--pairs")) {
    MAGPIE_ASSIGN_OR_RETURN(c.e2e.pairs, p.integer("--pairs", 3));
    if (c.e2e.pairs < 2) return invalid_argument("--pairs must be >= 2 (the noise test needs repeated runs)");
    c.e2e.max_pairs = std::max(c.e2e.max_pairs, c.e2e.pairs);
  }
  if (p.has("--max-pairs")) {
    MAGPIE_ASSIGN_OR_RETURN(c.e2e.max_pairs, p.integer("--max-pairs", 3));
  }
  if (p.has("--target-mde-pct")) {
    MAGPIE_ASSIGN_OR_RETURN(c.e2e.target_mde_pct, p.number("--target-mde-pct", 0));
    if (c.e2e.target_mde_pct < 0) return invalid_argument("--target-mde-pct must be >= 0");
  }
  if (p.has("--max-series-s")) {
    MAGPIE_ASSIGN_OR_RETURN(c.e2e.max_series_s, p.number("--max-series-s", 0));
    if (c.e2e.max_series_s < 0) return invalid_argument("--max-series-s must be >= 0");
  }
  if (c.e2e.max_pairs < c.e2e.pairs) return invalid_argument("--max-pairs must be >= the pairs (%lld)", static_cast<long long>(c.e2e.pairs));
  if (p.has("--alpha")) {
    MAGPIE_ASSIGN_OR_RETURN(c.decision.alpha, p.number("--alpha", 0.05));
    if (c.decision.alpha <= 0 || c.decision.alpha >= 0.5) return invalid_argument("--alpha must be in (0, 0.5)");
  }
  if (p.has("--num-prompts")) {
    MAGPIE_ASSIGN_OR_RETURN(c.workload.num_prompts, p.integer("--num-prompts", 0));
    if (c.workload.num_prompts < 1) return invalid_argument("--num-prompts must be >= 1");
  }
  if (p.has("--concurrency")) {
    MAGPIE_ASSIGN_OR_RETURN(c.workload.bench.client.max_concurrency, p.integer("--concurrency", 0));
    if (c.workload.bench.client.max_concurrency < 1) return invalid_argument("--concurrency must be >= 1");
  }
  if (p.has("--compare-max-time")) {
    MAGPIE_ASSIGN_OR_RETURN(c.compare_max_time_s, p.number("--compare-max-time", 6));
  }
  if (p.has("--ready-timeout")) {
    MAGPIE_ASSIGN_OR_RETURN(c.server.ready_timeout_s, p.number("--ready-timeout", 420));
  }
  return ok_status();
}

int dry_run(const optimize::optimize_config& c, const optimize::loop_options& o) {
  json plan = optimize::optimize_config_json(c);
  optimize::server_env env{o.python, o.workspace, o.workspace / "server_traces"};
  json servers = json::object();
  for (const auto& [tag, variant] : std::vector<std::pair<std::string, std::string>>{{"baseline", c.server.baseline}}) {
    std::vector<std::string> argv;
    for (const auto& a : c.server.command) {
      auto x = optimize::expand_placeholders(a, {{"variant", variant}, {"port", "<port>"}, {"trace_dir", env.trace_dir.string()},
                                                 {"config_dir", c.dir.string()}, {"python", o.python}, {"out", o.workspace.string()},
                                                 {"concurrency", std::to_string(c.workload.concurrency())}});
      if (!x.ok()) {
        std::fprintf(stderr, "magpie optimize: %s: server.command: %s\n", c.path.c_str(), x.get_status().message().c_str());
        return k_exit_usage;
      }
      argv.push_back(*x);
    }
    servers[tag] = argv;
  }
  plan["server_commands"] = servers;
  plan["workload"] = serve::benchmark_config_json(c.workload.bench)["client"];
  plan["workspace"] = o.workspace.string();
  std::fputs(dump_pretty(plan).c_str(), stdout);
  return k_exit_ok;
}

int run(const std::vector<std::string>& args, const global_options& g) {
  arg_parser p = make_optimize_parser();
  if (auto rc = parse_or_exit(p, args)) return *rc;
  fs::path cfg_path = p.has("--config") ? fs::path(p.value("--config")) : g.config_path;
  if (cfg_path.empty()) {
    std::fprintf(stderr, "magpie optimize: give the loop's configuration with -c optimize.yaml\n");
    return k_exit_usage;
  }
  auto cfg = optimize::load_optimize_config(cfg_path);
  if (!cfg.ok()) {
    std::fprintf(stderr, "magpie optimize: %s\n", cfg.get_status().message().c_str());
    return k_exit_usage;
  }
  if (auto st = apply_overrides(p, *cfg); !st.ok()) {
    std::fprintf(stderr, "magpie optimize: %s\n", st.message().c_str());
    return k_exit_usage;
  }
  if (p.has("--resume") && !p.has("--from-step")) {
    std::fprintf(stderr, "magpie optimize: --resume needs --from-step\n");
    return k_exit_usage;
  }
  optimize::loop_options o;
  o.from_step = p.value("--from-step");
  o.resume_from = p.value("--resume");
  o.until = p.value("--until");
  const char* py = std::getenv("MAGPIE_PYTHON");
  o.python = p.has("--python") ? p.value("--python") : (py && *py ? py : "python3");
  std::error_code ec;
  o.self_exe = fs::read_symlink("/proc/self/exe", ec);
  if (p.has("--workspace")) {
    o.workspace = absolute_path(p.value("--workspace"));
  } else if (!o.from_step.empty() && o.resume_from.empty()) {
    std::fprintf(stderr, "magpie optimize: --from-step needs --workspace (resume in place) or --resume DIR\n");
    return k_exit_usage;
  } else if (!p.has("--dry-run")) {
    auto ws = create_workspace(p.value("--output-dir", "./results"), "optimize", cfg->name);
    if (!ws.ok()) {
      std::fprintf(stderr, "magpie optimize: %s\n", ws.get_status().message().c_str());
      return k_exit_failure;
    }
    o.workspace = ws->dir;
  }
  if (p.has("--dry-run")) return dry_run(*cfg, o);
  MAGPIE_LOG_INFO("workspace: %s", o.workspace.c_str());
  auto res = optimize::run_loop(*cfg, o);
  if (!res.ok()) {
    std::fprintf(stderr, "magpie optimize: %s\n", res.get_status().message().c_str());
    return res.get_status().code() == status_code::invalid_argument ? k_exit_usage : k_exit_failure;
  }
  std::fputs(optimize::summary_table(res->report).c_str(), stdout);
  std::printf("report: %s\n        %s\n", res->report_json.c_str(), res->report_md.c_str());
  if (res->control_failed) return k_exit_failure;
  return res->outcome == optimize::loop_result::failed ? k_exit_failure : k_exit_ok;
}

}  // namespace

MAGPIE_SUBCOMMAND(optimize, "optimize", "run the optimization loop end to end (optimize.yaml)", run);

}  // namespace magpie::cli
