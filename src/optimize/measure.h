// The server side of the loop (a server per kernel variant, started from the config's
// command, ready on /health and /v1/models, identified by its info endpoint, warmed by a
// discarded pass of the workload) and the measured benchmark runs (the serve module's client,
// in-process), each with its metrics and input fingerprint.
#pragma once

#include <memory>
#include <string>

#include "core/json.h"
#include "optimize/commands.h"
#include "optimize/config.h"
#include "optimize/decide.h"
#include "serve/launcher.h"

namespace magpie::optimize {

/// The server's answer on its info endpoint: a JSON object of the server's own, kept verbatim
/// for the report; the loop reads its keys (identity_keys, variant_check, kernel_spec) through
/// optimize/server_info_codec.h.
struct server_info {
  json document = json::object();
};

/// Values of the command placeholders that do not depend on the variant.
struct server_env {
  std::string python = "python3";
  fs::path workspace, trace_dir;
};

class variant_server {
 public:
  /// Spawns the command for `variant` on `port` (not yet ready). `tag` names the log
  /// (<workspace>/logs/server_<tag>.log).
  static status_or<std::unique_ptr<variant_server>> spawn(const optimize_config& cfg, const server_env& env,
                                                           const std::string& tag, const std::string& variant, int port);
  ~variant_server();
  /// Waits for readiness (the loop's interrupt is polled), then reads the info endpoint.
  status wait_ready(double timeout_s);
  /// Stops the whole process group; idempotent.
  void stop();
  std::string url() const { return m_plan.url.to_string(); }
  const std::string& tag() const { return m_tag; }
  const std::string& variant() const { return m_variant; }
  const server_info& info() const { return m_info; }
  const std::vector<std::string>& argv() const { return m_plan.server_argv; }
  const fs::path& log_path() const { return m_log; }
  double ready_s() const { return m_ready_s; }
  /// How the process ended ("" while running).
  const std::string& exit_text() const { return m_exit; }

 private:
  variant_server() = default;
  std::string m_tag, m_variant, m_info_path;
  serve::server_plan m_plan;
  fs::path m_log;
  std::unique_ptr<serve::server_process> m_proc;
  server_info m_info;
  double m_started = 0, m_ready_s = 0;
  std::string m_exit;
};

/// One benchmark run against a server.
struct bench_request {
  std::string name;            ///< e.g. "bench_baseline_0" (log and command name)
  const variant_server* server = nullptr;
  int64_t num_prompts = 0;
  fs::path out_dir;            ///< the run's workspace is created inside
  bool profile = false;        ///< torch profiler around the run, traces from env.trace_dir
};

struct bench_result {
  fs::path workspace;
  std::string url, server_tag;
  run_metrics metrics;
  fingerprint fp;
  json config_for_hash;        ///< the run's config without the server URL (same-inputs check)
};

/// Runs the client; an error (prefixed "benchmark_failed:") when the run did not succeed.
status_or<bench_result> run_benchmark(const optimize_config& cfg, const server_env& env, command_runner& cmds,
                                      const bench_request& req);

}  // namespace magpie::optimize
