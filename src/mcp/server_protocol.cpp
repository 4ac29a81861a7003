// MCP stdio server: framing, era detection, dispatch (see server_protocol.h).
#include "mcp/server_protocol.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "core/log.h"
#include "core/strings.h"
#include "core/json_schema.h"
#include "mcp/policy_args_codec.h"

namespace magpie::mcp {

using namespace magpie::schema;  // the one schema library (core/json_schema.h)
namespace {

std::atomic<bool> g_terminate{false};
void on_terminate(int) { g_terminate = true; }

constexpr const char* k_meta_version = "io.modelcontextprotocol/protocolVersion";
constexpr int64_t k_list_ttl_ms = 3600 * 1000;
/// Nesting bound of one message: tool arguments are shallow; handlers copy and walk them.
constexpr size_t k_max_message_depth = 128;

const char* k_instructions =
    "magpie evaluates GPU kernels (analyze, compare), benchmarks inference servers (benchmark: returns a run "
    "handle, poll benchmark_status), analyses PyTorch-profiler traces (gap_analysis, trace_report) and maps "
    "kernel names to source (find_kernel_sources). Results are stored per workspace; list_benchmark_results, "
    "get_benchmark_result and compare_benchmark_reports read them.";

bool valid_id(const json& id) { return id.is_string() || id.is_number_integer() || id.is_number_unsigned(); }

/// The modern-era protocol version in params._meta, or "" (legacy request).
std::string modern_version(const json& msg) {
  if (!msg.contains("params") || !msg["params"].is_object()) return "";
  const json& p = msg["params"];
  if (!p.contains("_meta") || !p["_meta"].is_object()) return "";
  return json_string(p["_meta"], k_meta_version, "");
}

json progress_token(const json& params) {
  if (!params.is_object() || !params.contains("_meta") || !params["_meta"].is_object()) return nullptr;
  const json& m = params["_meta"];
  if (m.contains("progressToken") && (m["progressToken"].is_string() || m["progressToken"].is_number_integer()))
    return m["progressToken"];
  return nullptr;
}

}  // namespace

trust_policy server_settings::default_policy() {
  trust_policy p;
  std::error_code ec;
  p.root = fs::canonical(fs::current_path(ec), ec);
  if (p.root.empty()) p.root = "/nonexistent-root";  // nothing resolves inside it
  return p;
}

void tool_context::progress(double value, double total, const std::string& message) {
  std::lock_guard<std::mutex> lock(m_mu);
  // Progress must increase; a cancelled request gets no more messages (its child may still log
  // while it stops, e.g. the interrupted run recording itself).
  if (!m_progress || value <= m_last || cancelled()) return;
  m_last = value;
  m_progress(value, total, message);
}

const std::vector<std::string>& legacy_versions() {
  static const std::vector<std::string> v = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
  return v;
}

const std::vector<std::string>& supported_versions() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> all{k_modern_version};
    for (const auto& l : legacy_versions()) all.push_back(l);
    return all;
  }();
  return v;
}

server::server(server_settings settings, std::FILE* out) : m_settings(std::move(settings)), m_out(out) {}

server::~server() {
  join_workers();
  m_runs.shutdown();
}

void server::send(const json& message) {
  std::string line = dump_compact(message);  // JSON escapes newlines: one message per line
  line += '\n';
  std::lock_guard<std::mutex> lock(m_out_mu);
  std::fwrite(line.data(), 1, line.size(), m_out);
  std::fflush(m_out);
}

void server::send_result(const json& id, json result, bool modern) {
  if (modern && result.is_object() && !result.contains("resultType")) result["resultType"] = "complete";
  send({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

void server::send_error(const json& id, int code, const std::string& message, json data) {
  json err = {{"code", code}, {"message", message}};
  if (!data.is_null()) err["data"] = std::move(data);
  send({{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(err)}});
}

json server::initialize_result(const json& params) const {
  std::string requested = json_string(params, "protocolVersion", "");
  std::string chosen = legacy_versions().front();
  for (const auto& v : legacy_versions())
    if (v == requested) chosen = v;
  return {{"protocolVersion", chosen},
          {"capabilities", {{"tools", {{"listChanged", false}}}, {"logging", json::object()}}},
          {"serverInfo", {{"name", "magpie"}, {"title", "magpie GPU kernel and serving benchmark tools"},
                          {"version", m_settings.version}}},
          {"instructions", k_instructions}};
}

json server::discover_result() const {
  return {{"supportedVersions", supported_versions()},
          {"capabilities", {{"tools", {{"listChanged", false}}}}},
          {"instructions", k_instructions},
          {"ttlMs", k_list_ttl_ms},
          {"cacheScope", "public"},
          {"_meta", {{"io.modelcontextprotocol/serverInfo", {{"name", "magpie"}, {"version", m_settings.version}}}}}};
}

json server::tools_list_result() const {
  json tools = json::array();
  for (const auto& t : all_tools()) {
    tools.push_back({{"name", t.name},
                     {"title", t.title},
                     {"description", t.description},
                     {"inputSchema", t.input_schema},
                     {"outputSchema", t.output_schema},
                     {"annotations", {{"title", t.title}, {"readOnlyHint", t.read_only}, {"openWorldHint", false}}}});
  }
  return {{"tools", tools}};
}

void server::handle_line(const std::string& raw) {
  std::string_view line = trim(raw);
  if (line.empty()) return;
  auto parsed = parse_json(line, "message", k_max_message_depth);
  if (!parsed.ok()) {
    send_error(nullptr, rpc_error::parse, "Parse error: " + parsed.get_status().message());
    return;
  }
  const json& msg = *parsed;
  if (msg.is_array()) {
    send_error(nullptr, rpc_error::invalid_request, "Invalid Request: JSON-RPC batches are not supported by MCP");
    return;
  }
  if (!msg.is_object() || json_string(msg, "jsonrpc") != "2.0") {
    json id = msg.is_object() && msg.contains("id") && valid_id(msg["id"]) ? msg["id"] : json(nullptr);
    send_error(id, rpc_error::invalid_request, "Invalid Request: expected a JSON-RPC 2.0 object");
    return;
  }
  if (!msg.contains("method")) {
    if (msg.contains("result") || msg.contains("error")) return;  // a response: we send no requests
    send_error(msg.contains("id") && valid_id(msg["id"]) ? msg["id"] : json(nullptr), rpc_error::invalid_request,
               "Invalid Request: no method");
    return;
  }
  if (!msg["method"].is_string()) {
    send_error(msg.contains("id") && valid_id(msg["id"]) ? msg["id"] : json(nullptr), rpc_error::invalid_request,
               "Invalid Request: method must be a string");
    return;
  }
  if (!msg.contains("id")) {
    handle_notification(msg);
    return;
  }
  if (!valid_id(msg["id"])) {
    send_error(nullptr, rpc_error::invalid_request, "Invalid Request: id must be a string or an integer");
    return;
  }
  if (msg.contains("params") && !msg["params"].is_object() && !msg["params"].is_null()) {
    send_error(msg["id"], rpc_error::invalid_params, "Invalid params: params must be an object");
    return;
  }
  handle_request(msg);
}

void server::handle_notification(const json& msg) {
  const std::string method = json_string(msg, "method");
  if (method == "notifications/initialized") {
    m_initialized = true;
  } else if (method == "notifications/cancelled") {
    const json& p = msg.contains("params") ? msg["params"] : json();
    if (p.is_object() && p.contains("requestId")) {
      std::lock_guard<std::mutex> lock(m_calls_mu);
      auto it = m_calls.find(dump_compact(p["requestId"]));
      if (it != m_calls.end()) {
        MAGPIE_LOG_INFO("mcp: cancelling request %s (%s)", it->first.c_str(), json_string(p, "reason", "").c_str());
        it->second->ctx->cancel();
      }
    }
  }
  // Other notifications (progress from a client, roots changes …) need no action.
}

void server::handle_request(const json& msg) {
  const json& id = msg["id"];
  const std::string method = json_string(msg, "method");
  const json params = msg.contains("params") && msg["params"].is_object() ? msg["params"] : json::object();
  std::string version = modern_version(msg);
  bool modern = !version.empty();
  if (modern && version != k_modern_version) {
    send_error(id, rpc_error::unsupported_version, "Unsupported protocol version: " + version,
               {{"supported", supported_versions()}, {"requested", version}});
    return;
  }
  if (method == "initialize") {
    m_negotiated = json_string(initialize_result(params), "protocolVersion");
    send_result(id, initialize_result(params), false);
  } else if (method == "ping") {
    send_result(id, json::object(), modern);
  } else if (method == "logging/setLevel" && !modern) {
    // Legacy logging capability: the level applies to our stderr log (no notifications/message).
    std::string lvl = json_string(params, "level", "");
    static const std::map<std::string, log::level> k_levels = {
        {"debug", log::level::debug},   {"info", log::level::info},     {"notice", log::level::info},
        {"warning", log::level::warn},  {"error", log::level::error},   {"critical", log::level::error},
        {"alert", log::level::error},   {"emergency", log::level::error}};
    auto it = k_levels.find(lvl);
    if (it == k_levels.end()) {
      send_error(id, rpc_error::invalid_params, "Invalid params: unknown log level '" + lvl + "'");
      return;
    }
    log::set_level(it->second);
    send_result(id, json::object(), false);
  } else if (method == "server/discover") {
    send_result(id, discover_result(), true);
  } else if (method == "tools/list") {
    json r = tools_list_result();
    if (modern) {
      r["ttlMs"] = k_list_ttl_ms;
      r["cacheScope"] = "public";
    }
    send_result(id, std::move(r), modern);
  } else if (method == "tools/call") {
    handle_tools_call(id, params, modern);
  } else if (method == "resources/list" || method == "prompts/list" || method == "resources/templates/list") {
    send_error(id, rpc_error::method_not_found, "Method not found: " + method + " (this server offers tools only)");
  } else {
    send_error(id, rpc_error::method_not_found, "Method not found: " + method);
  }
}

void server::handle_tools_call(const json& id, const json& params, bool modern) {
  if (!params.contains("name") || !params["name"].is_string()) {
    send_error(id, rpc_error::invalid_params, "Invalid params: tools/call needs a string 'name'");
    return;
  }
  std::string name = json_string(params, "name");
  const tool_def* tool = find_tool(name);
  if (!tool) {
    send_error(id, rpc_error::invalid_params, "Unknown tool: " + name, {{"tool", name}});
    return;
  }
  json args = params.contains("arguments") ? params["arguments"] : json::object();
  if (args.is_null()) args = json::object();
  if (!args.is_object()) {
    send_error(id, rpc_error::invalid_params, "Invalid params: 'arguments' must be an object");
    return;
  }
  std::string key = dump_compact(id);
  json token = progress_token(params);
  tool_context::progress_fn progress;
  if (!token.is_null()) {
    progress = [this, token](double v, double total, const std::string& message) {
      json p = {{"progressToken", token}, {"progress", v}};
      if (total > 0) p["total"] = total;
      if (!message.empty()) p["message"] = message.substr(0, 500);
      send({{"jsonrpc", "2.0"}, {"method", "notifications/progress"}, {"params", p}});
    };
  }
  reap_finished();
  auto state = std::make_unique<call_state>();
  state->ctx = std::make_shared<tool_context>(m_settings, m_runs, progress);
  std::lock_guard<std::mutex> lock(m_calls_mu);
  if (m_calls.count(key)) {
    send_error(id, rpc_error::invalid_request, "Invalid Request: id " + key + " is already in flight");
    return;
  }
  auto ctx = state->ctx;
  call_state* sp = state.get();
  state->worker = std::thread([this, id, key, tool, args, ctx, modern, sp] {
    tool_result r;
    if (std::string problem = validate(tool->input_schema, args); !problem.empty()) {
      r = tool_result::error("invalid arguments for " + tool->name + ": " + problem);
    } else if (auto allowed = apply_trust_policy(tool->name, args, m_settings.policy); !allowed.ok()) {
      MAGPIE_LOG_WARN("mcp: %s refused: %s", tool->name.c_str(), allowed.get_status().message().c_str());
      r = tool_result::error(tool->name + " refused: " + allowed.get_status().message());
    } else {
      r = tool->handler(*allowed, *ctx);
    }
    if (!ctx->cancelled()) {  // a cancelled request gets no response
      json result = {{"content", json::array({{{"type", "text"}, {"text", r.text}}})}, {"isError", r.is_error}};
      if (!r.is_error && r.structured.is_object()) {
        result["content"].push_back({{"type", "text"}, {"text", dump_compact(r.structured)}});
        result["structuredContent"] = r.structured;
      }
      send_result(id, std::move(result), modern);
    }
    std::lock_guard<std::mutex> l(m_calls_mu);
    sp->done = true;
  });
  m_calls[key] = std::move(state);
}

void server::reap_finished() {
  std::lock_guard<std::mutex> lock(m_calls_mu);
  for (auto it = m_calls.begin(); it != m_calls.end();) {
    if (it->second->done) {
      if (it->second->worker.joinable()) it->second->worker.join();
      it = m_calls.erase(it);
    } else {
      ++it;
    }
  }
}

void server::join_workers() {
  std::vector<std::thread*> ws;
  {
    std::lock_guard<std::mutex> lock(m_calls_mu);
    for (auto& [k, c] : m_calls)
      if (c->worker.joinable()) ws.push_back(&c->worker);
  }
  for (auto* w : ws) w->join();
  std::lock_guard<std::mutex> lock(m_calls_mu);
  m_calls.clear();
}

int server::serve(int in_fd) {
  std::string buf, line;
  bool discarding = false;  // inside an over-long line: drop bytes until its newline
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = ::read(in_fd, chunk, sizeof chunk);
    if (g_terminate.load()) break;
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    size_t start = 0;
    for (ssize_t i = 0; i < n; ++i) {
      if (chunk[i] != '\n') continue;
      if (!discarding) {
        buf.append(chunk + start, static_cast<size_t>(i) - start);
        handle_line(buf);
      }
      buf.clear();
      discarding = false;
      start = static_cast<size_t>(i) + 1;
    }
    if (!discarding) buf.append(chunk + start, static_cast<size_t>(n) - start);
    if (!discarding && buf.size() > m_settings.max_message_bytes) {
      send_error(nullptr, rpc_error::parse,
                 strprintf("Parse error: message exceeds %zu bytes (--max-message-bytes)", m_settings.max_message_bytes));
      buf.clear();
      discarding = true;
    }
  }
  if (g_terminate.load()) {  // SIGTERM/SIGINT: stop running tools, answer nothing more
    std::lock_guard<std::mutex> lock(m_calls_mu);
    for (auto& [k, c] : m_calls) c->ctx->cancel();
  } else if (!discarding && !trim(buf).empty()) {
    handle_line(buf);  // last line without '\n'
  }
  join_workers();  // EOF: in-flight calls finish and answer (the client may still read)
  m_runs.shutdown();
  return 0;
}

int run_stdio_server(const server_settings& settings) {
  ::signal(SIGPIPE, SIG_IGN);  // a vanished client must not kill us mid-write
  struct sigaction sa {};
  sa.sa_handler = on_terminate;  // no SA_RESTART: read() returns EINTR
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  // Keep the protocol stream private: fd 1 → stderr for everything else in this process.
  int proto_fd = ::dup(STDOUT_FILENO);
  if (proto_fd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    MAGPIE_LOG_ERROR("mcp: cannot set up stdout: %s", std::strerror(errno));
    return 1;
  }
  std::FILE* out = ::fdopen(proto_fd, "w");
  if (!out) return 1;
  MAGPIE_LOG_INFO("magpie mcp %s: serving on stdio (protocol %s and %s)", settings.version.c_str(), k_modern_version,
                  legacy_versions().front().c_str());
  int rc;
  {
    server s(settings, out);
    rc = s.serve(STDIN_FILENO);
  }
  std::fclose(out);
  return rc;
}

}  // namespace magpie::mcp
