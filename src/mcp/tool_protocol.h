// MCP tool registry: each tool has a name, description, JSON Schemas for its arguments and
// its structured result, and a handler. Handlers run on a worker thread; they report
// progress and observe cancellation through tool_context.
// A protocol edge (scripts/boundaries.py): a tool_def is a tools/list entry and a tool_result a
// tools/call result, so the arguments, the schemas and structuredContent are MCP's JSON. A
// handler decodes its arguments into its own struct first (tool_args_codec.h) and builds
// structuredContent from typed results through the producers' printers.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/json.h"
#include "core/subprocess.h"
#include "mcp/policy.h"

namespace magpie::mcp {

/// Server-wide settings the tools need.
struct server_settings {
  fs::path self_exe;               ///< this magpie binary (children run its CLI)
  fs::path default_output_dir = "results";  ///< relative to the server's cwd
  size_t max_message_bytes = 64u << 20;
  std::string version;             ///< magpie version for serverInfo
  /// What a client may make magpie do (policy.h); the default (root: the current directory,
  /// nothing client-chosen allowed) is replaced by `magpie mcp` from its flags.
  trust_policy policy = default_policy();
  static trust_policy default_policy();
};

class run_registry;

/// Per-call context: progress notifications (when the request had a progressToken) and
/// cancellation (notifications/cancelled or server shutdown).
class tool_context {
 public:
  using progress_fn = std::function<void(double progress, double total, const std::string& message)>;
  tool_context(const server_settings& s, run_registry& runs, progress_fn progress)
      : m_settings(s), m_runs(runs), m_progress(std::move(progress)) {}

  const server_settings& settings() const { return m_settings; }
  run_registry& runs() { return m_runs; }
  /// Monotonic progress; total <= 0 means unknown. No-op without a progressToken.
  void progress(double value, double total, const std::string& message);
  bool cancelled() const { return m_cancelled.load(); }
  void cancel() { m_cancelled = true; }

 private:
  const server_settings& m_settings;
  run_registry& m_runs;
  progress_fn m_progress;
  std::atomic<bool> m_cancelled{false};
  std::mutex m_mu;
  double m_last = -1;
};

struct tool_result {
  bool is_error = false;
  std::string text;        ///< short human summary (or the error message)
  json structured;         ///< structuredContent (objects only; null on error)

  static tool_result ok(std::string text, json structured) { return {false, std::move(text), std::move(structured)}; }
  static tool_result error(std::string message) { return {true, std::move(message), nullptr}; }
};

using tool_handler = std::function<tool_result(const json& args, tool_context& ctx)>;

struct tool_def {
  std::string name, title, description;
  json input_schema;   ///< JSON Schema object (additionalProperties false)
  json output_schema;  ///< JSON Schema object for structuredContent
  bool read_only = true;  ///< annotations.readOnlyHint
  tool_handler handler;
};

/// Every tool of the server, in tools/list order.
const std::vector<tool_def>& all_tools();
const tool_def* find_tool(const std::string& name);

// Registration helpers used by tools_*.cpp (called once from all_tools()).
void add_kernel_tools(std::vector<tool_def>* out);
void add_trace_tools(std::vector<tool_def>* out);
void add_results_tools(std::vector<tool_def>* out);
void add_benchmark_tools(std::vector<tool_def>* out);
void add_misc_tools(std::vector<tool_def>* out);
void add_jobs_tools(std::vector<tool_def>* out);
void add_optimize_tools(std::vector<tool_def>* out);

}  // namespace magpie::mcp
