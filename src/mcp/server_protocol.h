// MCP server over stdio: newline-delimited JSON-RPC 2.0, one message per line, UTF-8.
// Dual era:
//   * 2025-11-25 and earlier (legacy): `initialize` → `notifications/initialized`, `ping`.
//   * 2026-07-28 (modern, stateless): no handshake; each request carries
//     params._meta["io.modelcontextprotocol/protocolVersion"]; `server/discover`; results carry
//     resultType, list results carry ttlMs / cacheScope.
// Protocol faults are JSON-RPC errors (-32700 parse, -32600 invalid request, -32601 method not
// found, -32602 invalid params incl. unknown tool, -32022 unsupported protocol version); tool
// failures — including arguments that fail the tool's inputSchema — are results with
// isError: true. tools/call runs on worker threads, so ping / cancellation are answered while
// a tool runs. Nothing but protocol messages goes to stdout (fd 1 is pointed at stderr while
// the server runs, so stray prints cannot corrupt the stream).
// A protocol edge (scripts/boundaries.py): its messages are JSON-RPC; the public entry points
// take lines and file descriptors (`handle_line`, `serve`, run_stdio_server).
#pragma once

#include <cstdio>
#include <istream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/json.h"
#include "mcp/run_registry.h"
#include "mcp/tool_protocol.h"

namespace magpie::mcp {

constexpr const char* k_modern_version = "2026-07-28";
/// Versions negotiable through `initialize`, newest first.
const std::vector<std::string>& legacy_versions();
/// Every version this server speaks (modern first).
const std::vector<std::string>& supported_versions();

namespace rpc_error {
constexpr int parse = -32700, invalid_request = -32600, method_not_found = -32601, invalid_params = -32602,
              internal = -32603, unsupported_version = -32022;
}

/// One line-oriented server. `out` receives protocol lines; it is written under a mutex.
class server {
 public:
  server(server_settings settings, std::FILE* out);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// Reads messages from `in_fd` until EOF; returns the process exit code. On EOF in-flight
  /// tool calls finish and answer, then background runs are killed; on SIGTERM/SIGINT
  /// in-flight calls are cancelled (their children killed) without an answer.
  int serve(int in_fd);
  /// Handles one message line (exposed for tests); responses go to `out`.
  void handle_line(const std::string& line);
  /// Waits for every running tools/call worker.
  void join_workers();

 private:
  struct call_state {
    std::shared_ptr<tool_context> ctx;
    std::thread worker;
    bool done = false;
  };

  void send(const json& message);
  void send_result(const json& id, json result, bool modern);
  void send_error(const json& id, int code, const std::string& message, json data = nullptr);
  void handle_request(const json& msg);
  void handle_notification(const json& msg);
  void handle_tools_call(const json& id, const json& params, bool modern);
  json initialize_result(const json& params) const;
  json discover_result() const;
  json tools_list_result() const;
  void reap_finished();

  server_settings m_settings;
  std::FILE* m_out;
  std::mutex m_out_mu;
  run_registry m_runs;
  std::mutex m_calls_mu;
  std::map<std::string, std::unique_ptr<call_state>> m_calls;  ///< key: dump of the request id
  bool m_initialized = false;
  std::string m_negotiated;  ///< legacy protocol version after initialize
};

/// `magpie mcp` entry: runs the server on stdin/stdout.
int run_stdio_server(const server_settings& settings);

}  // namespace magpie::mcp
