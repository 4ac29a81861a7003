// Inference-server launch: the command line per framework (vLLM, SGLang, ATOM), local or in
// docker, its own process group (core/subprocess), a log file, readiness on /health and
// /v1/models, and a stop of the whole group (docker: `docker stop` of the named container).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/env.h"
#include "core/json.h"
#include "core/status.h"
#include "core/subprocess.h"
#include "serve/bench_config.h"
#include "serve/http_client.h"

namespace magpie::serve {

struct launch_context {
  fs::path workspace;           ///< host workspace (mounted at /workspace in docker)
  int port = 8000;
  std::string vendor;           ///< NVIDIA | AMD | "" (unknown: docker gets no GPU flags)
  env_list gpu_env;             ///< from GPU selection
  std::string vllm_version;     ///< "0.19.1" or "" (unknown)
  std::string task_id;          ///< container name suffix
};

struct server_plan {
  std::vector<std::string> server_argv;  ///< the inference server's own command line
  std::vector<std::string> argv;         ///< what is spawned (= server_argv locally, docker run ... in docker)
  env_list env;                          ///< exported to the server (docker: as -e flags)
  std::string container_name;            ///< docker mode
  std::string image;                     ///< docker mode
  std::string server_trace_dir;          ///< where the server writes traces (container path in docker)
  fs::path host_trace_dir;               ///< the same directory on this host (<workspace>/torch_trace)
  profiler_delivery profiler_args = profiler_delivery::none;  ///< flags | env | none (never auto)
  double stop_grace_s = 10;              ///< SIGTERM → SIGKILL delay
  /// profiler.system_profiler: {"tool": "nsys", "report": "<ws>/system_profile/server.nsys-rep"}
  /// when the server runs under Nsight Systems, {"skipped": "<why>"} when requested but not
  /// possible here, null when not requested.
  json system_profiler = nullptr;
  endpoint_url url;
};

/// Builds the plan; invalid_argument for unsupported combinations (e.g. atom on NVIDIA docker).
status_or<server_plan> plan_server(const benchmark_config& cfg, const launch_context& ctx);

/// Magpie's image table (benchmark_images.yaml): framework × vendor/arch → image.
status_or<std::string> default_image(serving_framework framework, const std::string& vendor, const std::string& arch);

/// "0.19.1" from "vllm/vllm-openai:v0.19.1" or `vllm --version` output; "" when none.
std::string parse_version(const std::string& text);
/// True when version a >= b (numeric components).
bool version_at_least(const std::string& a, const std::string& b);

/// Names whose values are hidden in reports (tokens, keys, passwords).
bool is_secret_env(const std::string& key);

/// A running server: its process group is supervised by a thread that streams its output to
/// the log file; stop() ends the whole group.
class server_process {
 public:
  static status_or<std::unique_ptr<server_process>> start(const server_plan& plan, const fs::path& log_path);
  ~server_process();
  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;

  bool exited() const { return m_exited.load(); }
  /// "exit code 1" etc. once exited (empty before).
  std::string exit_description() const;
  /// Polls /health until 2xx, then /v1/models until it lists a model (every 0.5 s).
  /// Errors: unavailable when the server exits first, timeout after timeout_s; both carry the
  /// last answer seen and the log tail.
  /// `cancel` (optional) is polled too: a non-empty answer stops the wait with that reason.
  status wait_ready(double timeout_s, const std::function<std::string()>& cancel = {});
  /// docker stop (docker mode), SIGTERM to the group, SIGKILL after the grace period; idempotent.
  /// Returns how the process ended.
  std::string stop();
  /// The last `lines` lines of the log.
  std::string log_tail(size_t lines = 20) const;
  pid_t pid() const { return m_pid; }

 private:
  server_process() = default;
  void monitor();
  void stop_child();  ///< stop() for a started child (docker stop, group signals, reap)

  server_plan m_plan;
  std::unique_ptr<child_process> m_child;
  pid_t m_pid = -1;
  std::thread m_thread;
  std::atomic<bool> m_exited{false}, m_stop{false};
  mutable std::mutex m_mu;
  std::string m_tail;  ///< last 64 KiB of output
  std::string m_exit;
  FILE* m_log = nullptr;
  bool m_stopped = false;
};

/// An unused TCP port on 127.0.0.1 (bound, then released).
status_or<int> free_port();

}  // namespace magpie::serve
