// magpie mcp: the MCP server on stdio.
#include <cstdio>

#include "cli/subcommand.h"
#include "core/args.h"
#include "core/strings.h"
#include "magpie_generated/version.h"
#include "mcp/server.h"

namespace magpie::cli {
namespace {

int run_mcp(const std::vector<std::string>& args, const global_options& g) {
  (void)g;
  arg_parser p("magpie mcp",
               "Model Context Protocol server on stdio (newline-delimited JSON-RPC 2.0). Speaks protocol 2026-07-28\n"
               "(stateless, server/discover, per-request _meta) and 2025-11-25/2025-06-18/2025-03-26/2024-11-05\n"
               "(initialize handshake). Tools: analyze, compare, benchmark (+ benchmark_status/benchmark_cancel),\n"
               "gap_analysis, trace_report, find_kernel_sources, discover_kernels, suggest_optimizations,\n"
               "create_kernel_config, hardware_spec, list_benchmark_images, list_benchmark_results,\n"
               "get_benchmark_result, compare_benchmark_reports. Logs go to stderr; stdout carries only protocol.");
  p.add_value("--output-dir", "-o", "DIR", "default results directory of the tools (default ./results)")
      .add_value("--max-message-bytes", "", "N", "largest accepted message line in bytes (default 67108864)");
  p.set_epilog("Client config example: {\"command\": \"magpie\", \"args\": [\"mcp\"]}\n"
               "The server exits when stdin closes; running tool calls and background runs are then stopped.");
  if (auto st = p.parse(args); !st.ok()) {
    std::fprintf(stderr, "magpie mcp: %s\n", st.message().c_str());
    return k_exit_usage;
  }
  if (p.help_requested()) {
    std::fputs(p.help().c_str(), stdout);
    return k_exit_ok;
  }
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
  s.version = std::string(MAGPIE_VERSION "+" MAGPIE_GIT_COMMIT);
  return mcp::run_stdio_server(s);
}

}  // namespace
MAGPIE_SUBCOMMAND(mcp, "mcp", "Model Context Protocol server on stdio (tools for agents)", run_mcp);
}  // namespace magpie::cli
