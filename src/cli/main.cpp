// magpie: GPU kernel evaluation, inference-serving benchmarks and trace analysis.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "cli/subcommand.h"
#include "core/args.h"
#include "core/log.h"
#include "core/process_tree.h"
#include "core/progress.h"
#include "core/sandbox.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "core/workspace.h"
#include "gpu/detect.h"
#include "magpie_generated/version.h"

namespace magpie::cli {

bool register_subcommand(const subcommand& s) {
  auto& v = const_cast<std::vector<subcommand>&>(subcommands());
  v.push_back(s);
  std::sort(v.begin(), v.end(), [](const subcommand& a, const subcommand& b) { return std::string(a.name) < b.name; });
  return true;
}

const std::vector<subcommand>& subcommands() {
  static std::vector<subcommand> v;
  return v;
}

namespace {

arg_parser make_global_parser() {
  arg_parser p("magpie", "GPU kernel evaluation (analyze/compare), inference-serving benchmarks and trace analysis.");
  p.add_value("--config", "-c", "FILE", "framework config YAML (default: built-in defaults, as Magpie's config.yaml)")
      .add_bool("--verbose", "-v", "debug logging on stderr")
      .add_bool("--quiet", "-q", "warnings and errors only; no progress bar")
      .add_bool("--gpu-info", "", "print the detected GPU (vendor, architecture, compiler, profiler) and exit")
      .add_value("--environment", "-e", "ENV", "scheduler environment override", {"local", "container", "ray", "slurm"})
      .add_value("--workers", "-w", "N", "maximum parallel workers (scheduler.max_workers); compare: one per GPU, "
                                        "processes bound with CUDA_VISIBLE_DEVICES (docs/multi-gpu.md; default 1)")
      .add_value("--docker-image", "", "IMAGE", "image for the container environment")
      .add_bool("--no-sandbox", "", "run code under test without the candidate sandbox (as MAGPIE_NO_SANDBOX=1; "
                                    "reported as a warning in its integrity block)")
      .add_bool("--version", "", "print the version and exit")
      .stop_at_first_positional();
  std::string epilog = "subcommands:\n";
  for (const auto& s : subcommands()) epilog += strprintf("  %-12s %s\n", s.name, s.summary);
  epilog += "\nRun 'magpie <subcommand> --help' for the options of one subcommand.\n"
            "Machine output goes to stdout and files; logs, progress and errors go to stderr.\n"
            "Exit codes (every subcommand): 0 ok; 1 failed; 2 usage (bad flags or config values); 3 a partial\n"
            "result, outputs written (trace, benchmark: see their --help; --allow-partial makes it 0).";
  p.set_epilog(epilog);
  return p;
}

}  // namespace
}  // namespace magpie::cli

int main(int argc, char** argv) {
  using namespace magpie;
  using namespace magpie::cli;
  // The candidate sandbox's helper (core/sandbox.h): before anything else runs.
  if (argc > 1 && std::string(argv[1]) == "__sandbox") sandbox_helper_main(argc, argv);
  std::vector<std::string> args(argv + 1, argv + argc);
  install_termination_handlers();  // Ctrl-C / SIGTERM end every descendant (magpie is their subreaper)
  if (const char* off = std::getenv("MAGPIE_NO_STORE"); off == nullptr || std::string(off) != "1") {
    std::error_code ec;  // an interrupted run is recorded in the results store by `magpie results register`
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) set_interrupt_recorder({self.string(), "--quiet", "results", "register"});
  }
  // A child that closes a pipe we write to (a harness's control channel, a server's stdin) must
  // end that child's run with EPIPE, never this process with SIGPIPE. Children get the default
  // disposition back (core/spawn.cpp).
  std::signal(SIGPIPE, SIG_IGN);
  arg_parser p = make_global_parser();
  if (auto st = p.parse(args); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return k_exit_usage;
  }
  global_options g;
  g.config_path = p.value("--config");
  g.verbose = p.has("--verbose");
  g.quiet = p.has("--quiet");
  g.environment = p.value("--environment");
  g.docker_image = p.value("--docker-image");
  if (p.has("--no-sandbox")) disable_sandbox();
  if (p.has("--workers")) {
    auto w = p.integer_in("--workers", 0, 1, 4096);
    if (!w.ok()) {
      std::fprintf(stderr, "%s\n", w.get_status().message().c_str());
      return k_exit_usage;
    }
    g.workers = static_cast<int>(*w);
  }
  if (g.verbose) log::set_level(log::level::debug);
  if (g.quiet) {
    log::set_level(log::level::warn);
    progress_bar::disable_globally();
  }
  if (p.has("--version")) {
    std::printf("magpie %s (%s)\n", MAGPIE_VERSION, MAGPIE_GIT_COMMIT);
    return k_exit_ok;
  }
  if (p.has("--gpu-info")) {
    std::fputs(gpu::format_gpu_info(gpu::detect()).c_str(), stdout);
    return k_exit_ok;
  }
  if (p.help_requested() && p.rest().empty()) {
    std::fputs(p.help().c_str(), stdout);
    return k_exit_ok;
  }
  if (p.rest().empty()) {  // no subcommand: a usage error (as argparse with required subcommands)
    std::fputs(p.help().c_str(), stderr);
    return k_exit_usage;
  }
  const std::string& name = p.rest()[0];
  std::vector<std::string> sub_args(p.rest().begin() + 1, p.rest().end());
  for (const auto& s : subcommands()) {
    if (name != s.name) continue;
    int rc = s.run(sub_args, g);
    // No orphans: what a run left behind (a descendant that left its session and its run's
    // tag, core/process_tree.h) ends with it. Not for the MCP server: servers that its runs
    // deliberately left running (persistent inference servers) are re-parented to it.
    if (name != "mcp") end_all_descendants_signal_safe(0.5);
    return rc;
  }
  std::vector<std::string> names;
  for (const auto& s : subcommands()) names.push_back(s.name);
  std::fprintf(stderr, "magpie: unknown subcommand '%s'%s (see magpie --help)\n", name.c_str(),
               did_you_mean(name, names).c_str());
  return k_exit_usage;
}
