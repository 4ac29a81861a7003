// server_lifecycle: persistent local inference servers (see server_lifecycle.h).
#include "serve/server_lifecycle.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <set>
#include <thread>
#include <utility>

#include "core/env.h"
#include "core/log.h"
#include "core/process_tree.h"
#include "core/spawn.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "core/workspace.h"
#include "serve/server_lifecycle_codec.h"
#include "serve/server_plan_printer.h"

extern char** environ;

namespace magpie::serve {
namespace {

std::string home_dir() {
  const char* h = std::getenv("HOME");
  return h ? h : "/tmp";
}

bool health_ok(const endpoint_url& url) {
  auto r = http_call(url, "GET", "/health", "", 3.0);
  return r.ok() && r->status >= 200 && r->status < 400;
}

/// `docker ARGS...` (docker mode); the result of the call.
status_or<run_result> docker(std::vector<std::string> args, double timeout_s) {
  spawn_spec sp;
  sp.argv = {"docker"};
  sp.argv.insert(sp.argv.end(), args.begin(), args.end());
  return run_command(sp, timeout_s);
}

bool container_running(const std::string& name) {
  auto r = docker({"inspect", "-f", "{{.State.Running}}", name}, 30);
  return r.ok() && r->success() && trim(r->out) == "true";
}

/// The container's output (docker logs), or its last `tail` lines.
std::string container_logs(const std::string& name, int tail = 0) {
  std::vector<std::string> args = {"logs"};
  if (tail > 0) args.insert(args.end(), {"--tail", std::to_string(tail)});
  args.push_back(name);
  auto r = docker(args, 60);
  return r.ok() ? r->out + r->err : "";
}

/// "pid 123" or "container magpie-server-vllm-8888".
std::string describe(const persistent_server& s) {
  return s.container.empty() ? strprintf("pid %d", static_cast<int>(s.pid)) : "container " + s.container;
}

void remove_state(const persistent_server& s) {
  std::error_code ec;
  fs::remove(s.pid_file, ec);
  fs::remove(s.meta_file, ec);
}

persistent_server state_of(const benchmark_config& c, const server_plan& plan) {
  persistent_server s;
  fs::path dir = lifecycle_dir(c.lifecycle);
  std::string stem = c.framework_name() + "_" + std::to_string(plan.url.port);
  s.pid_file = dir / (stem + ".pid");
  s.meta_file = dir / (stem + ".json");
  s.url = plan.url;
  return s;
}

/// SIGTERM to the group, SIGKILL after `grace_s`.
void stop_group(const persistent_server& s, double grace_s) {
  if (!s.container.empty()) {  // docker stop sends SIGTERM, then SIGKILL after the grace period
    (void)docker({"stop", "-t", std::to_string(static_cast<int>(grace_s)), s.container}, grace_s + 60);
    (void)docker({"rm", "-f", s.container}, 60);
    return;
  }
  if (s.pid <= 0) return;
  ::kill(-s.pid, SIGTERM);
  double until = monotonic_seconds() + grace_s;
  while (persistent_server_alive(s) && monotonic_seconds() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (persistent_server_alive(s)) ::kill(-s.pid, SIGKILL);
  ::kill(-s.pid, SIGKILL);  // members of the group that outlived their leader
  if (s.started_here) {
    int st = 0;
    ::waitpid(s.pid, &st, 0);
  }
}

status_or<pid_t> spawn_detached(const server_plan& plan, const fs::path& log_path) {
  auto env = current_environment();
  merge_env(env, plan.env);
  std::string exe = find_executable(plan.argv[0], env.count("PATH") ? env["PATH"] : std::string());
  if (exe.empty()) return not_found("command not found: %s", plan.argv[0].c_str());
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  std::vector<std::string> env_s;
  env.erase("MAGPIE_PROCESS_TREE");  // left running on purpose: it belongs to no run's process tree
  for (const auto& [k, v] : env) env_s.push_back(k + "=" + v);
  pid_t pid = -1;
  int rc = spawn_in_new_session(&pid, exe, &fa, plan.argv, std::move(env_s));
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return io_error("cannot start %s: %s", exe.c_str(), std::strerror(rc));
  keep_on_exit(pid);  // magpie's Ctrl-C sweep of its descendants leaves it running
  return pid;
}

std::string log_tail(const fs::path& log, size_t bytes = 3000) {
  auto text = read_file(log);
  if (!text.ok()) return "";
  return text->size() > bytes ? text->substr(text->size() - bytes) : *text;
}

/// Polls /health (2xx), then /v1/models (lists a model), every 0.5 s.
status wait_ready(const persistent_server& s, double timeout_s, const std::function<std::string()>& cancel) {
  double start = monotonic_seconds();
  bool healthy = false;
  std::string last = "no answer yet";
  for (;;) {
    if (std::string why = cancel ? cancel() : ""; !why.empty())
      return error(status_code::cancelled, "waiting for the server stopped: %s", why.c_str());
    if (!persistent_server_alive(s))
      return error(status_code::unavailable, "the server exited before it was ready; last log lines:\n%s",
                   s.container.empty() ? log_tail(s.log_file).c_str() : container_logs(s.container, 40).c_str());
    if (monotonic_seconds() - start > timeout_s)
      return error(status_code::timeout, "the server was not ready within %.0f s (server_ready_timeout_s; last answer: %s)",
                   timeout_s, last.c_str());
    double poll_s = std::clamp(timeout_s - (monotonic_seconds() - start), 0.1, 2.0);  // never past the ready timeout
    auto r = http_call(s.url, "GET", healthy ? "/v1/models" : "/health", "", poll_s);
    if (!r.ok()) last = r.get_status().message();
    else if (r->status < 200 || r->status >= 300) last = strprintf("HTTP %d", r->status);
    else if (!healthy) {
      healthy = true;
      continue;
    } else if (contains(r->body, "\"id\"")) {
      return ok_status();
    } else {
      last = "/v1/models lists no model";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

/// docker mode: `docker run -d ...` returns once the container runs (after any image pull, bounded
/// by `timeout_s`); its id and command go to `log_path`.
status start_container(const server_plan& plan, const fs::path& log_path, double timeout_s) {
  spawn_spec sp;
  sp.argv = plan.argv;  // the server's environment travels as -e flags
  auto r = run_command(sp, timeout_s);
  if (!r.ok()) return r.get_status();
  std::string text = "# magpie: " + argv_to_display(json_strings(server_plan_json(plan), "launch_command")) +
                     "\n" + r->out + r->err + "# magpie: server output: docker logs " + plan.container_name + "\n";
  (void)write_file_atomic(log_path, text);
  if (!r->success())
    return error(status_code::unavailable, "docker run of the server container failed (%s): %s", r->describe().c_str(),
                 r->output_tail().c_str());
  return ok_status();
}

}  // namespace

json persistent_server_json(const persistent_server& s) {
  return {{"pid", s.pid}, {"reused", s.reused}, {"url", s.url.to_string()}, {"pid_file", s.pid_file.string()},
          {"state_file", s.meta_file.string()}, {"log", s.log_file.empty() ? json(nullptr) : json(s.log_file.string())},
          {"container", s.container.empty() ? json(nullptr) : json(s.container)}};
}

fs::path lifecycle_dir(const lifecycle_settings& l) {
  std::string d = l.pid_dir.empty() ? "~/.cache/magpie/server" : l.pid_dir;
  if (starts_with(d, "~/")) d = home_dir() + d.substr(1);
  return absolute_path(d);
}

json lifecycle_metadata(const benchmark_config& c, const server_plan& plan) {
  json env = json::object();
  // GPU selection happens after the reuse check, and the client's envs do not reach the server's
  // behaviour (a run at another CONC reuses the server, as in Magpie): neither is compared.
  static const std::set<std::string> client_only = {"CONC", "ISL", "OSL", "NUM_PROMPTS", "RANDOM_RANGE_RATIO"};
  for (const auto& [k, v] : plan.env)
    if (!is_secret_env(k) && !ends_with(k, "_VISIBLE_DEVICES") && k != "CUDA_DEVICE_ORDER" && !client_only.count(k))
      env[k] = v;
  // server_argv, not argv: docker's argv carries the starting run's workspace mount.
  return {{"framework", c.framework_name()}, {"model", c.model}, {"tp", c.tp()}, {"port", plan.url.port},
          {"precision", c.precision}, {"max_model_len", c.env("MAX_MODEL_LEN")},
          {"extra_vllm_args", c.env("EXTRA_VLLM_ARGS")}, {"extra_sglang_args", c.env("EXTRA_SGLANG_ARGS")},
          {"extra_atom_args", c.env("EXTRA_ATOM_ARGS")}, {"server_command", plan.server_argv},
          {"run_mode", c.run_mode}, {"image", plan.image}, {"env", env}};
}

bool persistent_server_alive(const persistent_server& s) {
  if (!s.container.empty()) return container_running(s.container);
  if (s.pid <= 0) return false;
  if (s.started_here) {
    int st = 0;
    if (::waitpid(s.pid, &st, WNOHANG) == s.pid) return false;
  }
  return ::kill(s.pid, 0) == 0 || errno == EPERM;
}

status_or<persistent_server> find_reusable_server(const benchmark_config& c, const server_plan& plan) {
  persistent_server s = state_of(c, plan);
  auto meta = read_json_file(s.meta_file);
  auto pid_text = read_file(s.pid_file);
  if (meta.ok()) s.container = json_string(*meta, "container");
  if (!pid_text.ok() && s.container.empty()) return s;  // nothing recorded
  auto pid = pid_text.ok() ? parse_int(trim(*pid_text)) : std::nullopt;
  s.pid = pid && *pid > 0 ? static_cast<pid_t>(*pid) : -1;
  std::string who = describe(s);
  if (!persistent_server_alive(s)) {
    MAGPIE_LOG_INFO("server_lifecycle: recorded server (%s) is gone; removing its state", who.c_str());
    if (!s.container.empty()) (void)docker({"rm", "-f", s.container}, 60);  // an exited container keeps its name
    remove_state(s);
    s.pid = -1;
    s.container.clear();
    return s;
  }
  bool same = meta.ok() && (*meta).value("metadata", json()) == lifecycle_metadata(c, plan);
  if (same || c.lifecycle.force_reuse) {
    if (health_ok(s.url)) {
      s.reused = true;
      if (meta.ok()) s.log_file = json_string(*meta, "log");
      if (!same) MAGPIE_LOG_WARN("server_lifecycle: force_reuse: reusing %s although its settings differ", who.c_str());
      return s;
    }
    MAGPIE_LOG_WARN("server_lifecycle: recorded server (%s) does not answer /health; replacing it", who.c_str());
  } else if (!c.lifecycle.cleanup) {
    return error(status_code::failed_precondition,
                 "server_lifecycle: a server started with other settings is running on port %d (%s, state %s); "
                 "stop it, or set server_lifecycle.cleanup: true (replace it) or force_reuse: true (use it)",
                 static_cast<int>(plan.url.port), who.c_str(), s.meta_file.c_str());
  }
  stop_group(s, 30);
  remove_state(s);
  s.pid = -1;
  s.container.clear();
  return s;
}

status_or<persistent_server> start_persistent_server(const benchmark_config& c, const server_plan& plan,
                                                     const fs::path& log_path,
                                                     const std::function<std::string()>& cancel) {
  persistent_server s = state_of(c, plan);
  MAGPIE_RETURN_IF_ERROR(make_dirs(s.pid_file.parent_path()));
  s.log_file = log_path;
  if (!plan.container_name.empty()) {
    MAGPIE_RETURN_IF_ERROR(start_container(plan, log_path, c.lifecycle.server_ready_timeout_s));
    s.container = plan.container_name;
  } else {
    MAGPIE_ASSIGN_OR_RETURN(s.pid, spawn_detached(plan, log_path));
    s.started_here = true;
  }
  MAGPIE_LOG_INFO("server_lifecycle: started server %s (kept after this run unless cleanup: true): %s",
                  describe(s).c_str(), argv_to_display(plan.server_argv).c_str());
  json meta = {{"metadata", lifecycle_metadata(c, plan)}, {"pid", s.pid}, {"log", log_path.string()},
               {"started_at", iso_time_now()}};
  if (!s.container.empty()) meta["container"] = s.container;
  else MAGPIE_RETURN_IF_ERROR(write_file_atomic(s.pid_file, std::to_string(s.pid) + "\n"));
  MAGPIE_RETURN_IF_ERROR(write_file_atomic(s.meta_file, dump_pretty(meta)));
  if (status st = wait_ready(s, c.lifecycle.server_ready_timeout_s, cancel); !st.ok()) {
    stop_group(s, 30);
    remove_state(s);
    return st;
  }
  return s;
}

std::string release_persistent_server(const persistent_server& s, bool cleanup, const fs::path& workspace) {
  if (!cleanup) return "kept running (" + describe(s) + ", server_lifecycle)";
  if (!s.container.empty() && !workspace.empty()) {  // Magpie keeps the container's output of a cleanup run
    std::string logs = container_logs(s.container);
    if (!logs.empty()) (void)write_file_atomic(workspace / "reuse_server_container.log", logs);
  }
  stop_group(s, 30);
  remove_state(s);
  return "stopped by magpie (server_lifecycle cleanup, " + describe(s) + ")";
}

}  // namespace magpie::serve
