// server_lifecycle: persistent local inference servers (see server_lifecycle.h).
#include "serve/server_lifecycle.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <thread>

#include "core/env.h"
#include "core/log.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "core/workspace.h"

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

void remove_state(const persistent_server& s) {
  std::error_code ec;
  fs::remove(s.pid_file, ec);
  fs::remove(s.meta_file, ec);
}

persistent_server state_of(const benchmark_config& c, const server_plan& plan) {
  persistent_server s;
  fs::path dir = lifecycle_dir(c.lifecycle);
  std::string stem = c.framework + "_" + std::to_string(plan.url.port);
  s.pid_file = dir / (stem + ".pid");
  s.meta_file = dir / (stem + ".json");
  s.url = plan.url;
  return s;
}

/// SIGTERM to the group, SIGKILL after `grace_s`.
void stop_group(const persistent_server& s, double grace_s) {
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
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGCHLD, SIGHUP, SIGQUIT}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<std::string> argv_s = plan.argv, env_s;
  for (const auto& [k, v] : env) env_s.push_back(k + "=" + v);
  std::vector<char*> argv, envp;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, exe.c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return io_error("cannot start %s: %s", exe.c_str(), std::strerror(rc));
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
                   log_tail(s.log_file).c_str());
    if (monotonic_seconds() - start > timeout_s)
      return error(status_code::timeout, "the server was not ready within %.0f s (server_ready_timeout_s; last answer: %s)",
                   timeout_s, last.c_str());
    auto r = http_call(s.url, "GET", healthy ? "/v1/models" : "/health", "", 2.0);
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

}  // namespace

json persistent_server::to_json() const {
  return {{"pid", pid}, {"reused", reused}, {"url", url.to_string()}, {"pid_file", pid_file.string()},
          {"state_file", meta_file.string()}, {"log", log_file.empty() ? json(nullptr) : json(log_file.string())}};
}

fs::path lifecycle_dir(const lifecycle_settings& l) {
  std::string d = l.pid_dir.empty() ? "~/.cache/magpie/server" : l.pid_dir;
  if (starts_with(d, "~/")) d = home_dir() + d.substr(1);
  return absolute_path(d);
}

json lifecycle_metadata(const benchmark_config& c, const server_plan& plan) {
  json env = json::object();
  for (const auto& [k, v] : plan.env)  // GPU selection happens after the reuse check: not compared
    if (!is_secret_env(k) && !ends_with(k, "_VISIBLE_DEVICES") && k != "CUDA_DEVICE_ORDER") env[k] = v;
  return {{"framework", c.framework}, {"model", c.model}, {"tp", c.tp()}, {"port", plan.url.port},
          {"precision", c.precision}, {"max_model_len", c.env("MAX_MODEL_LEN")},
          {"extra_vllm_args", c.env("EXTRA_VLLM_ARGS")}, {"extra_sglang_args", c.env("EXTRA_SGLANG_ARGS")},
          {"extra_atom_args", c.env("EXTRA_ATOM_ARGS")}, {"server_command", plan.argv}, {"env", env}};
}

bool persistent_server_alive(const persistent_server& s) {
  if (s.pid <= 0) return false;
  if (s.started_here) {
    int st = 0;
    if (::waitpid(s.pid, &st, WNOHANG) == s.pid) return false;
  }
  return ::kill(s.pid, 0) == 0 || errno == EPERM;
}

status_or<persistent_server> find_reusable_server(const benchmark_config& c, const server_plan& plan) {
  persistent_server s = state_of(c, plan);
  auto pid_text = read_file(s.pid_file);
  if (!pid_text.ok()) return s;  // nothing recorded
  auto pid = parse_int(trim(*pid_text));
  auto meta = read_json_file(s.meta_file);
  s.pid = pid && *pid > 0 ? static_cast<pid_t>(*pid) : -1;
  if (!persistent_server_alive(s)) {
    MAGPIE_LOG_INFO("server_lifecycle: recorded server (pid %d) is gone; removing its state", static_cast<int>(s.pid));
    remove_state(s);
    s.pid = -1;
    return s;
  }
  bool same = meta.ok() && (*meta).value("metadata", json()) == lifecycle_metadata(c, plan);
  if (same || c.lifecycle.force_reuse) {
    if (health_ok(s.url)) {
      s.reused = true;
      if (meta.ok()) s.log_file = json_string(*meta, "log");
      if (!same) MAGPIE_LOG_WARN("server_lifecycle: force_reuse: reusing pid %d although its settings differ", static_cast<int>(s.pid));
      return s;
    }
    MAGPIE_LOG_WARN("server_lifecycle: recorded server pid %d does not answer /health; replacing it", static_cast<int>(s.pid));
  } else if (!c.lifecycle.cleanup) {
    return error(status_code::failed_precondition,
                 "server_lifecycle: a server started with other settings is running on port %d (pid %d, state %s); "
                 "stop it, or set server_lifecycle.cleanup: true (replace it) or force_reuse: true (use it)",
                 static_cast<int>(plan.url.port), static_cast<int>(s.pid), s.meta_file.c_str());
  }
  stop_group(s, 30);
  remove_state(s);
  s.pid = -1;
  return s;
}

status_or<persistent_server> start_persistent_server(const benchmark_config& c, const server_plan& plan,
                                                     const fs::path& log_path,
                                                     const std::function<std::string()>& cancel) {
  persistent_server s = state_of(c, plan);
  MAGPIE_RETURN_IF_ERROR(make_dirs(s.pid_file.parent_path()));
  MAGPIE_ASSIGN_OR_RETURN(s.pid, spawn_detached(plan, log_path));
  s.started_here = true;
  s.log_file = log_path;
  MAGPIE_LOG_INFO("server_lifecycle: started server pid %d (kept after this run unless cleanup: true): %s",
                  static_cast<int>(s.pid), argv_to_display(plan.argv).c_str());
  json meta = {{"metadata", lifecycle_metadata(c, plan)}, {"pid", s.pid}, {"log", log_path.string()},
               {"started_at", iso_time_now()}};
  MAGPIE_RETURN_IF_ERROR(write_file_atomic(s.pid_file, std::to_string(s.pid) + "\n"));
  MAGPIE_RETURN_IF_ERROR(write_file_atomic(s.meta_file, dump_pretty(meta)));
  if (status st = wait_ready(s, c.lifecycle.server_ready_timeout_s, cancel); !st.ok()) {
    stop_group(s, 30);
    remove_state(s);
    return st;
  }
  return s;
}

std::string release_persistent_server(const persistent_server& s, bool cleanup) {
  if (!cleanup) return strprintf("kept running (pid %d, server_lifecycle)", static_cast<int>(s.pid));
  stop_group(s, 30);
  remove_state(s);
  return strprintf("stopped by magpie (server_lifecycle cleanup, pid %d)", static_cast<int>(s.pid));
}

}  // namespace magpie::serve
