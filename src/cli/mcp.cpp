// magpie mcp: the MCP server on stdio.
#include <cstdio>

#include "cli/cli_common.h"
#include "cli/subcommand.h"
#include "core/args.h"
#include "core/log.h"
#include "core/strings.h"
#include "magpie_generated/version.h"
#include "mcp/server_protocol.h"

namespace magpie::cli {
namespace {

constexpr const char* k_trust_epilog =
    "Trust model (docs/mcp.md): a client can make this server run magpie's own pipelines only: kernel files\n"
    "compiled with magpie's default commands (nvcc/hipcc/g++ with magpie's flags) and run in magpie's harnesses\n"
    "(include/magpie/bench.hpp, python -m magpie_bench), the frameworks' launchers (vllm/sglang/atom with magpie's\n"
    "arguments), trace and report readers. Kernel sources are code: they run as this user (sandboxed where the\n"
    "integrity work provides it). Refused by default, with an error naming the argument:\n"
    "  * client-chosen programs: compile_command, testcase_command(s), a benchmark server command\n"
    "    (benchmark_config.server.command), optimize's python: allowed per program with --allow-command PROG\n"
    "    (a name on PATH or a path; an interpreter such as bash or python3 lets the client run anything);\n"
    "  * client-chosen arguments and images: benchmark extra_args beyond plain client settings, server args, nsys\n"
    "    args, docker_image, environment variables that load code (LD_*, PATH, PYTHON*, *_ARGS, ...): only with\n"
    "    --trust-client, which allows every command and argument (a client you trust as yourself);\n"
    "  * paths outside the workspace root (after '..' and every symbolic link) or the -o results directory.\n"
    "Files already in the workspace root (an optimize.yaml, a batch directory) are the operator's: the commands\n"
    "inside them run as written.\n";

int run_mcp(const std::vector<std::string>& args, const global_options& g) {
  (void)g;
  arg_parser p("magpie mcp",
               "Model Context Protocol server on stdio (newline-delimited JSON-RPC 2.0). Speaks protocol 2026-07-28\n"
               "(stateless, server/discover, per-request _meta) and 2025-11-25/2025-06-18/2025-03-26/2024-11-05\n"
               "(initialize handshake). Tools: analyze, compare, benchmark (+ benchmark_status/benchmark_cancel),\n"
               "gap_analysis, trace_report, find_kernel_sources, discover_kernels, suggest_optimizations,\n"
               "create_kernel_config, hardware_spec, list_benchmark_images, list_benchmark_results,\n"
               "get_benchmark_result, compare_benchmark_reports, jobs_*, ray_task_*, optimize*. Logs go to stderr;\n"
               "stdout carries only protocol.");
  p.add_value("--output-dir", "-o", "DIR", "default results directory of the tools (default ./results; clients may also "
                                           "read and write inside it)")
      .add_value("--max-message-bytes", "", "N", "largest accepted message line in bytes (default 67108864)")
      .add_value("--workspace-root", "", "DIR", "every path a client passes must resolve inside DIR (default: the current "
                                               "directory); relative client paths are relative to it", {}, "trust")
      .add_multi("--allow-command", "", "PROG", "let clients run PROG as a compile/testcase/server command (a name on "
                                                "PATH or a path; repeat the flag or list several)", "trust")
      .add_bool("--trust-client", "", "allow every client-chosen command, argument, image and environment variable "
                                      "(paths stay confined to the workspace root)", "trust");
  p.set_epilog(std::string(k_trust_epilog) +
               "\nClient config example: {\"command\": \"magpie\", \"args\": [\"mcp\", \"--workspace-root\", \"/path/to/project\"]}\n"
               "The server exits when stdin closes; running tool calls and background runs are then stopped. Exit codes:\n"
               "0 after stdin closed, 2 for bad flags, 1 when stdout cannot be set up.");
  if (auto rc = parse_or_exit(p, args)) return *rc;
  mcp::server_settings s;
  std::error_code ec;
  s.self_exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) s.self_exe = "magpie";
  s.default_output_dir = p.value("--output-dir", "results");
  auto max = p.integer("--max-message-bytes", static_cast<int64_t>(s.max_message_bytes));
  if (!max.ok() || *max < 1024) {
    std::fprintf(stderr, "magpie mcp: --max-message-bytes must be an integer >= 1024\n");
    return k_exit_usage;
  }
  s.max_message_bytes = static_cast<size_t>(*max);
  std::vector<std::string> programs;
  for (const auto& v : p.values("--allow-command"))
    for (const auto& w : split(v, ','))
      if (!trim(w).empty()) programs.emplace_back(trim(w));
  auto policy = mcp::make_trust_policy(p.value("--workspace-root", "."), s.default_output_dir, programs,
                                       p.has("--trust-client"));
  if (!policy.ok()) {
    std::fprintf(stderr, "magpie mcp: %s\n", policy.get_status().message().c_str());
    return k_exit_usage;
  }
  s.policy = std::move(*policy);
  MAGPIE_LOG_INFO("mcp: trust: %s", s.policy.describe().c_str());
  s.version = std::string(MAGPIE_VERSION "+" MAGPIE_GIT_COMMIT);
  return mcp::run_stdio_server(s);
}

}  // namespace
MAGPIE_SUBCOMMAND(mcp, "mcp", "Model Context Protocol server on stdio (tools for agents)", run_mcp);
}  // namespace magpie::cli
