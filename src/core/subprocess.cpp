#include "core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "core/process_tree.h"
#include "core/spawn.h"
#include "core/workspace.h"
#include "core/utf8.h"
#include "core/strings.h"

namespace magpie {

double monotonic_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string run_result::describe() const {
  if (timed_out) return strprintf("timed out after %.1f s", wall_seconds);
  if (term_signal > 0) return strprintf("killed by signal %d (%s)", term_signal, strsignal(term_signal));
  return strprintf("exit code %d", exit_code);
}

std::string run_result::output_tail(size_t max_bytes) const {
  const std::string& s = trim(err).empty() ? out : err;
  std::string_view t = trim(s);
  if (t.size() <= max_bytes) return printable_text(t);
  return "..." + printable_text(t.substr(t.size() - max_bytes));
}

namespace {

// Process groups of live children, for the termination handler (async-signal-safe access).
constexpr int k_max_live = 512;
std::atomic<pid_t> g_live[k_max_live];

void register_live(pid_t pgid) {
  for (auto& slot : g_live) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, pgid)) return;
  }
}

void unregister_live(pid_t pgid) {
  for (auto& slot : g_live) {
    pid_t expected = pgid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

void on_termination_signal(int sig) {
  int saved_errno = errno;
  interrupt_runs_signal_safe(sig, 1);  // INCOMPLETE markers and the stderr message first
  for (auto& slot : g_live) {  // the groups we started, then every descendant (setsid ones too)
    pid_t p = slot.load();
    if (p > 0) ::kill(-p, SIGTERM);
  }
  end_all_descendants_signal_safe(0.5);
  for (auto& slot : g_live) {
    pid_t p = slot.load();
    if (p > 0) ::kill(-p, SIGKILL);
  }
  interrupt_runs_signal_safe(sig, 2);  // the results store records the runs as interrupted
  errno = saved_errno;
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// Moves fd to a number >= 10 with FD_CLOEXEC so dup2 onto 0..4 in the child never
// collides with a source descriptor.
int lift_fd(int fd) {
  int n = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  ::close(fd);
  return n;
}

bool make_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  fds[0] = lift_fd(fds[0]);
  fds[1] = lift_fd(fds[1]);
  return fds[0] >= 0 && fds[1] >= 0;
}

void set_nonblock(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::vector<std::string> build_envp(const spawn_spec& spec) {
  auto env = current_environment();
  merge_env(env, spec.env);
  for (const auto& k : spec.unset_env) env.erase(k);
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::string merged_path(const spawn_spec& spec) {
  auto env = current_environment();
  merge_env(env, spec.env);
  auto it = env.find("PATH");
  return it == env.end() ? "/usr/bin:/bin" : it->second;
}

}  // namespace

status_or<std::unique_ptr<child_process>> child_process::spawn(const spawn_spec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) return invalid_argument("empty command");
  if (!spec.cwd.empty() && !fs::is_directory(spec.cwd))
    return not_found("working directory does not exist: %s", spec.cwd.c_str());
  // A relative command path ("./run_test.sh") is looked up inside the child's working
  // directory, as exec after chdir (and upstream Magpie's subprocess cwd=) does.
  std::string exe = find_executable(spec.argv[0], merged_path(spec), spec.cwd);
  if (exe.empty()) {
    if (spec.argv[0].find('/') != std::string::npos && spec.argv[0][0] != '/' && !spec.cwd.empty())
      return not_found("command not found: %s (looked up in the working directory %s)", spec.argv[0].c_str(),
                       spec.cwd.c_str());
    return not_found("command not found: %s", spec.argv[0].c_str());
  }
  if (exe[0] != '/') exe = absolute_path(exe).string();  // the chdir below happens before exec

  std::unique_ptr<child_process> cp(new child_process());
  cp->m_spec = spec;
  cp->m_tag = new_tree_tag();
  cp->m_spec.env.emplace_back("MAGPIE_PROCESS_TREE", child_tree_chain(cp->m_tag));
  int out_p[2], err_p[2], in_p[2] = {-1, -1}, c_in[2] = {-1, -1}, c_out[2] = {-1, -1};
  if (!make_pipe(out_p) || !make_pipe(err_p)) return io_error("pipe: %s", std::strerror(errno));
  bool want_stdin = !spec.stdin_data.empty();
  if (want_stdin && !make_pipe(in_p)) return io_error("pipe: %s", std::strerror(errno));
  if (spec.control_channel && (!make_pipe(c_in) || !make_pipe(c_out)))
    return io_error("pipe: %s", std::strerror(errno));

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (want_stdin) posix_spawn_file_actions_adddup2(&fa, in_p[0], 0);
  else posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_p[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_p[1], 2);
  int first_free = 3;
  if (spec.control_channel) {
    posix_spawn_file_actions_adddup2(&fa, c_in[0], 3);
    posix_spawn_file_actions_adddup2(&fa, c_out[1], 4);
    first_free = 5;
  }
  // Move extra fds above every target first, so dup2 onto a target cannot clobber a source.
  std::vector<int> lifted;
  for (int fd : spec.extra_fds) lifted.push_back(::fcntl(fd, F_DUPFD_CLOEXEC, 256));
  for (size_t i = 0; i < lifted.size(); ++i)
    posix_spawn_file_actions_adddup2(&fa, lifted[i], first_free + static_cast<int>(i));
  first_free += static_cast<int>(lifted.size());
  posix_spawn_file_actions_addclosefrom_np(&fa, first_free);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, spec.cwd.c_str());

  std::vector<std::string> argv = spec.argv;
  if (spec.sandbox.enabled) {
    cp->m_sandbox_off = sandbox_unavailable_reason();
    if (cp->m_sandbox_off.empty()) {
      argv = sandbox_argv(spec.sandbox, exe, spec.argv);
      exe = sandbox_helper_exe();
    }
  }
  pid_t pid = -1;
  int rc = spawn_in_new_session(&pid, exe, &fa, std::move(argv), build_envp(cp->m_spec));
  posix_spawn_file_actions_destroy(&fa);
  for (int fd : lifted)
    if (fd >= 0) ::close(fd);
  ::close(out_p[1]);
  ::close(err_p[1]);
  if (want_stdin) ::close(in_p[0]);
  if (spec.control_channel) {
    ::close(c_in[0]);
    ::close(c_out[1]);
  }
  if (rc != 0) {
    for (int fd : {out_p[0], err_p[0], in_p[1], c_in[1], c_out[0]})
      if (fd >= 0) ::close(fd);
    return io_error("cannot start %s: %s", exe.c_str(), std::strerror(rc));
  }
  cp->m_pid = pid;
  register_live(pid);
  cp->m_start = monotonic_seconds();
  cp->m_out_fd = out_p[0];
  cp->m_err_fd = err_p[0];
  cp->m_in_fd = want_stdin ? in_p[1] : -1;
  cp->m_ctrl_w = spec.control_channel ? c_in[1] : -1;
  cp->m_ctrl_r = spec.control_channel ? c_out[0] : -1;
  for (int fd : {cp->m_out_fd, cp->m_err_fd, cp->m_in_fd, cp->m_ctrl_r})
    if (fd >= 0) set_nonblock(fd);
  cp->m_pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  return cp;
}

child_process::~child_process() {
  if (!m_exited) kill_group();
  if (m_pid > 0) {
    unregister_live(m_pid);
    forget_direct_child(m_pid);
  }
  close_fds();
}

void child_process::close_fds() {
  close_fd(m_out_fd);
  close_fd(m_err_fd);
  close_fd(m_in_fd);
  close_fd(m_ctrl_w);
  close_fd(m_ctrl_r);
  close_fd(m_pidfd);
}

void child_process::on_exit_status(int wstatus) {
  m_exited = true;
  m_result.wall_seconds = monotonic_seconds() - m_start;
  if (WIFEXITED(wstatus)) m_result.exit_code = WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) m_result.term_signal = WTERMSIG(wstatus);
}

bool child_process::pump(int max_wait_ms) {
  pollfd pfds[5];
  int n = 0;
  int idx_out = -1, idx_err = -1, idx_in = -1, idx_pid = -1, idx_ctrl = -1;
  if (m_out_fd >= 0) { idx_out = n; pfds[n++] = {m_out_fd, POLLIN, 0}; }
  if (m_err_fd >= 0) { idx_err = n; pfds[n++] = {m_err_fd, POLLIN, 0}; }
  if (m_in_fd >= 0) { idx_in = n; pfds[n++] = {m_in_fd, POLLOUT, 0}; }
  if (m_ctrl_r >= 0) { idx_ctrl = n; pfds[n++] = {m_ctrl_r, POLLIN, 0}; }
  if (m_pidfd >= 0 && !m_exited) { idx_pid = n; pfds[n++] = {m_pidfd, POLLIN, 0}; }
  int wait_ms = max_wait_ms;
  if (m_pidfd < 0 && !m_exited && wait_ms > 20) wait_ms = 20;  // no pidfd: poll waitpid
  int rc = ::poll(pfds, static_cast<nfds_t>(n), wait_ms);
  if (rc < 0 && errno != EINTR) return false;
  auto drain = [&](int& fd, std::string& buf, size_t& dropped, const std::function<void(std::string_view)>& cb) {
    char tmp[65536];
    for (;;) {
      ssize_t r = ::read(fd, tmp, sizeof tmp);
      if (r > 0) {
        std::string_view chunk(tmp, static_cast<size_t>(r));
        size_t room = m_spec.capture_limit > buf.size() ? m_spec.capture_limit - buf.size() : 0;
        buf.append(chunk.substr(0, room));
        if (chunk.size() > room) dropped += chunk.size() - room;
        if (cb) cb(chunk);
        if (m_spec.forward_output) (void)!::write(STDERR_FILENO, tmp, static_cast<size_t>(r));
        continue;
      }
      if (r == 0 || (errno != EAGAIN && errno != EINTR)) close_fd(fd);
      break;
    }
  };
  if (rc > 0) {
    if (idx_out >= 0 && pfds[idx_out].revents) drain(m_out_fd, m_result.out, m_result.out_dropped, m_spec.on_stdout);
    if (idx_err >= 0 && pfds[idx_err].revents) drain(m_err_fd, m_result.err, m_result.err_dropped, m_spec.on_stderr);
    if (idx_in >= 0 && pfds[idx_in].revents) {
      if (pfds[idx_in].revents & (POLLERR | POLLHUP)) {
        close_fd(m_in_fd);
      } else {
        ssize_t w = ::write(m_in_fd, m_spec.stdin_data.data() + m_stdin_off, m_spec.stdin_data.size() - m_stdin_off);
        if (w > 0) m_stdin_off += static_cast<size_t>(w);
        if (m_stdin_off >= m_spec.stdin_data.size() || (w < 0 && errno != EAGAIN)) close_fd(m_in_fd);
      }
    }
    if (idx_ctrl >= 0 && pfds[idx_ctrl].revents) {
      char tmp[4096];
      for (;;) {
        ssize_t r = ::read(m_ctrl_r, tmp, sizeof tmp);
        if (r > 0) { m_ctrl_buf.append(tmp, static_cast<size_t>(r)); continue; }
        if (r == 0 || (errno != EAGAIN && errno != EINTR)) close_fd(m_ctrl_r);
        break;
      }
    }
  }
  if (!m_exited && (idx_pid < 0 || (rc > 0 && pfds[idx_pid].revents))) {
    int ws = 0;
    pid_t r = ::waitpid(m_pid, &ws, WNOHANG);
    if (r == m_pid) on_exit_status(ws);
  }
  return !(m_exited && m_out_fd < 0 && m_err_fd < 0 && m_ctrl_r < 0);
}

void child_process::drain_after_exit() {
  // Grandchildren may keep the pipes open; give them a short grace, then stop reading.
  double until = monotonic_seconds() + 0.2;
  while ((m_out_fd >= 0 || m_err_fd >= 0) && monotonic_seconds() < until) pump(20);
  close_fds();
}

status_or<std::string> child_process::read_control_line(double timeout_s) {
  double deadline = monotonic_seconds() + timeout_s;
  for (;;) {
    auto nl = m_ctrl_buf.find('\n');
    if (nl != std::string::npos) {
      std::string line = m_ctrl_buf.substr(0, nl);
      m_ctrl_buf.erase(0, nl + 1);
      return line;
    }
    if (m_ctrl_r < 0 || m_exited) {
      // One more chance: data that arrived together with the exit.
      if (m_ctrl_r >= 0) pump(0);
      // The channel closed first: the exit status usually follows within milliseconds.
      double settle = std::min(monotonic_seconds() + 2.0, deadline);
      while (!m_exited && monotonic_seconds() < settle) pump(20);
      if (m_ctrl_buf.find('\n') != std::string::npos) continue;
      return error(status_code::unavailable, "the child %s before answering",
                   m_exited ? ("exited (" + m_result.describe() + ")").c_str() : "closed its control channel");
    }
    double left = deadline - monotonic_seconds();
    if (left <= 0) return error(status_code::timeout, "no answer on the control channel within %.1f s", timeout_s);
    pump(static_cast<int>(std::min(left, 0.1) * 1000) + 1);
  }
}

status child_process::stop_group_on_reply(bool on, const std::vector<pid_t>& tids) {
  for (int fd : m_stop_fds) ::close(fd);
  m_stop_fds.clear();
  if (m_ctrl_r < 0) return error(status_code::failed_precondition, "no control channel");
  auto arm = [on](int fd, __pid_type type, pid_t who) {
    const int fl = ::fcntl(fd, F_GETFL);
    f_owner_ex owner{type, who};
    if (fl < 0 || (on && (::fcntl(fd, F_SETOWN_EX, &owner) != 0 || ::fcntl(fd, F_SETSIG, SIGSTOP) != 0)) ||
        ::fcntl(fd, F_SETFL, on ? (fl | O_ASYNC) : (fl & ~O_ASYNC)) != 0)
      return error(status_code::internal, "arming the stop on reply (O_ASYNC, F_SETOWN_EX, F_SETSIG): %s", std::strerror(errno));
    return ok_status();
  };
  MAGPIE_RETURN_IF_ERROR(arm(m_ctrl_r, F_OWNER_PGRP, m_pid));
  if (!on) return ok_status();
  const std::string self = "/proc/self/fd/" + std::to_string(m_ctrl_r);
  for (pid_t tid : tids) {
    int fd = ::open(self.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a new open file description: its own owner
    if (fd < 0) continue;  // (a thread that exited meanwhile needs none)
    m_stop_fds.push_back(fd);
    if (!arm(fd, F_OWNER_TID, tid).ok()) {
      ::close(fd);
      m_stop_fds.pop_back();
    }
  }
  return ok_status();
}

status child_process::write_control(const std::string& line) {
  if (m_ctrl_w < 0) return error(status_code::failed_precondition, "no control channel");
  std::string data = line + "\n";
  size_t off = 0;
  while (off < data.size()) {
    ssize_t w = ::write(m_ctrl_w, data.data() + off, data.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      return error(status_code::unavailable, "control channel write failed: %s", std::strerror(errno));
    }
    off += static_cast<size_t>(w);
  }
  return ok_status();
}

void child_process::kill_group() {
  if (m_pid <= 0) return;
  if (!m_exited) {
    // The tree is snapshotted while the child lives (its descendants still hang under it).
    std::vector<pid_t> tree = tree_members(m_pid, m_tag);
    ::kill(-m_pid, SIGTERM);
    for (pid_t p : tree)
      if (p != m_pid) {
        pid_t g = ::getpgid(p);
        if (g > 1 && g != ::getpgrp()) ::kill(-g, SIGTERM);
        ::kill(p, SIGTERM);
      }
    double until = monotonic_seconds() + m_spec.kill_grace_s;
    while (!m_exited && monotonic_seconds() < until) pump(20);
    for (pid_t p : tree)
      if (p != m_pid) ::kill(p, SIGKILL);
    if (!m_exited) {
      ::kill(-m_pid, SIGKILL);
      int ws = 0;
      if (::waitpid(m_pid, &ws, 0) == m_pid) on_exit_status(ws);
    }
  }
  ::kill(-m_pid, SIGKILL);  // leftover members of the group (no-op if none)
  end_process_tree(-1, m_tag, 0.2);  // re-parented members (setsid descendants) still running
}

bool child_process::poll_output(double max_wait_s) {
  double until = monotonic_seconds() + max_wait_s;
  while (!m_exited) {
    double left = until - monotonic_seconds();
    if (left <= 0 || !pump(static_cast<int>(std::min(left, 0.1) * 1000) + 1)) break;
  }
  return !m_exited;
}

double child_process::age_seconds() const { return monotonic_seconds() - m_start; }

run_result child_process::wait(double timeout_s) {
  double deadline = timeout_s > 0 ? m_start + timeout_s : 0;
  close_fd(m_ctrl_w);  // a waiting harness sees EOF on its command channel
  while (!m_exited) {
    int ms = 100;
    if (deadline > 0) {
      double left = deadline - monotonic_seconds();
      if (left <= 0) {
        m_result.timed_out = true;
        kill_group();
        break;
      }
      ms = static_cast<int>(std::min(left, 0.1) * 1000) + 1;
    }
    pump(ms);
  }
  ::kill(-m_pid, SIGKILL);  // never leave orphans of the group behind
  end_process_tree(-1, m_tag, 0.2);  // nor of the tree: setsid descendants are re-parented to us
  reap_orphans();
  drain_after_exit();
  m_result.wall_seconds = monotonic_seconds() - m_start;
  return m_result;
}

void install_termination_handlers() {
  (void)become_subreaper();  // without it (old kernels) setsid descendants are found while their parent lives
  struct sigaction sa {};
  sa.sa_handler = on_termination_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

status_or<run_result> run_command(const spawn_spec& spec, double timeout_s) {
  MAGPIE_ASSIGN_OR_RETURN(auto child, child_process::spawn(spec));
  return child->wait(timeout_s);
}

}  // namespace magpie
