// server_process: supervision of a launched inference server (see launcher.h).
#include <algorithm>
#include <chrono>
#include <thread>

#include "core/log.h"
#include "core/strings.h"
#include "serve/launcher.h"
#include "serve/server_plan_printer.h"

namespace magpie::serve {

namespace {

constexpr size_t k_tail_bytes = 64u << 10;

}  // namespace

status_or<std::unique_ptr<server_process>> server_process::start(const server_plan& plan, const fs::path& log_path) {
  std::unique_ptr<server_process> sp(new server_process());
  sp->m_plan = plan;
  sp->m_log = std::fopen(log_path.c_str(), "w");
  if (!sp->m_log) return io_error("cannot write %s", log_path.c_str());
  std::fprintf(sp->m_log, "# magpie: %s\n", argv_to_display(json_strings(server_plan_json(plan), "launch_command")).c_str());
  std::fflush(sp->m_log);
  spawn_spec s;
  s.argv = plan.argv;
  if (plan.container_name.empty()) s.env = plan.env;  // docker: env travels as -e flags
  s.capture_limit = 64u << 10;
  s.kill_grace_s = plan.stop_grace_s;
  server_process* self = sp.get();
  auto sink = [self](std::string_view chunk) {
    std::lock_guard<std::mutex> lk(self->m_mu);
    if (self->m_log) {
      std::fwrite(chunk.data(), 1, chunk.size(), self->m_log);
      std::fflush(self->m_log);
    }
    self->m_tail.append(chunk);
    if (self->m_tail.size() > 2 * k_tail_bytes) self->m_tail.erase(0, self->m_tail.size() - k_tail_bytes);
  };
  s.on_stdout = sink;
  s.on_stderr = sink;
  MAGPIE_ASSIGN_OR_RETURN(sp->m_child, child_process::spawn(s));
  sp->m_pid = sp->m_child->pid();
  MAGPIE_LOG_INFO("server started (pid %d, process group %d): %s", static_cast<int>(sp->m_pid), static_cast<int>(sp->m_pid),
                  argv_to_display(plan.server_argv).c_str());
  sp->m_thread = std::thread([self] { self->monitor(); });
  return sp;
}

void server_process::monitor() {
  while (!m_stop.load()) {
    if (!m_child->poll_output(0.1)) {
      run_result r = m_child->wait(5.0);
      {
        std::lock_guard<std::mutex> lk(m_mu);
        m_exit = r.describe();
      }
      m_exited.store(true);
      return;
    }
  }
}

server_process::~server_process() { stop(); }

std::string server_process::exit_description() const {
  std::lock_guard<std::mutex> lk(m_mu);
  return m_exit;
}

std::string server_process::log_tail(size_t lines) const {
  std::lock_guard<std::mutex> lk(m_mu);
  size_t pos = m_tail.size();
  while (pos > 0 && (m_tail[pos - 1] == '\n' || m_tail[pos - 1] == '\r')) --pos;
  for (size_t n = 0; pos > 0; --pos)
    if (m_tail[pos - 1] == '\n' && ++n == lines) break;
  return std::string(trim(m_tail.substr(pos)));
}

status server_process::wait_ready(double timeout_s, const std::function<std::string()>& cancel) {
  double start = monotonic_seconds();
  std::string last = "no answer yet";
  bool healthy = false;
  for (;;) {
    if (cancel) {
      std::string why = cancel();
      if (!why.empty()) return error(status_code::cancelled, "waiting for the server stopped: %s", why.c_str());
    }
    if (exited())
      return error(status_code::unavailable, "the server exited before it was ready (%s); last log lines:\n%s",
                   exit_description().c_str(), log_tail().c_str());
    if (monotonic_seconds() - start > timeout_s)
      return error(status_code::timeout, "the server was not ready within %.0f s (last answer: %s); last log lines:\n%s",
                   timeout_s, last.c_str(), log_tail().c_str());
    double poll_s = std::clamp(timeout_s - (monotonic_seconds() - start), 0.1, 2.0);  // never past the ready timeout
    auto r = http_call(m_plan.url, "GET", healthy ? "/v1/models" : "/health", "", poll_s);
    if (!r.ok()) {
      last = r.get_status().message();
    } else if (r->status < 200 || r->status >= 300) {
      last = strprintf("%s HTTP %d", healthy ? "/v1/models" : "/health", r->status);
    } else if (!healthy) {
      healthy = true;
      continue;
    } else if (contains(r->body, "\"id\"")) {
      MAGPIE_LOG_INFO("server ready after %.1f s", monotonic_seconds() - start);
      return ok_status();
    } else {
      last = "/v1/models lists no model";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

void server_process::stop_child() {
  if (!m_plan.container_name.empty() && !exited()) {
    spawn_spec s;
    s.argv = {"docker", "stop", "-t", "10", m_plan.container_name};
    auto r = run_command(s, 60.0);
    if (!r.ok() || !r->success()) MAGPIE_LOG_WARN("docker stop %s failed; killing the docker client's process group", m_plan.container_name.c_str());
  }
  m_stop.store(true);
  if (m_thread.joinable()) m_thread.join();
  if (!exited()) {
    m_child->kill_group();
    run_result r = m_child->wait(5.0);
    std::lock_guard<std::mutex> lk(m_mu);
    m_exit = "stopped by magpie (" + r.describe() + ")";
  }
  m_child->kill_group();  // members of the group that outlived their leader
}

std::string server_process::stop() {
  if (m_stopped) return exit_description();
  m_stopped = true;
  if (m_child) stop_child();  // no child when the spawn failed
  std::lock_guard<std::mutex> lk(m_mu);
  if (m_log) {
    std::fprintf(m_log, "# magpie: server %s\n", m_exit.c_str());
    std::fclose(m_log);
    m_log = nullptr;
  }
  return m_exit;
}

}  // namespace magpie::serve
