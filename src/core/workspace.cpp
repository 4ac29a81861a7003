#include "core/workspace.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <mutex>

#include "core/json.h"
#include "core/process_tree.h"
#include "core/strings.h"

extern char** environ;

namespace magpie {

std::string timestamp_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d_%H%M%S", &tm);
  return buf;
}

std::string iso_time_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

status_or<workspace> create_workspace(const fs::path& output_dir, const std::string& mode,
                                      const std::string& label) {
  MAGPIE_RETURN_IF_ERROR(make_dirs(output_dir));
  workspace ws;
  ws.timestamp = timestamp_now();
  std::string base = mode;
  std::string clean = sanitize_label(label);
  if (!clean.empty()) base += "_" + clean;
  base += "_" + ws.timestamp;
  for (int attempt = 1; attempt < 1000; ++attempt) {
    std::string name = attempt == 1 ? base : base + "_" + std::to_string(attempt);
    fs::path dir = absolute_path(output_dir / name);
    if (::mkdir(dir.c_str(), 0755) == 0) {
      ws.dir = dir;
      return ws;
    }
    if (errno != EEXIST) return io_error("cannot create workspace %s: %s", dir.c_str(), std::strerror(errno));
  }
  return io_error("cannot find a free workspace name under %s", output_dir.c_str());
}

}  // namespace magpie

// ---- interrupted runs ----

namespace magpie {

namespace {

constexpr int k_max_runs = 8;
constexpr size_t k_path_max = 4096;
constexpr size_t k_rec_max = 8192;
constexpr int k_rec_args = 16;

struct run_slot {
  std::atomic<int> state{0};  ///< 0 free, 1 being written, 2 in progress, 3 marked
  char dir[k_path_max];
  char rec_buf[k_rec_max];    ///< recorder argv, NUL-separated
  char* rec_argv[k_rec_args];
};
run_slot g_runs[k_max_runs];
std::mutex g_rec_mu;
std::vector<std::string> g_recorder;

const char* signal_word(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
  }
}

void put(int fd, const char* s) { (void)!::write(fd, s, std::strlen(s)); }

/// The marker's JSON (signal-safe). `reason` and `dir` hold no quotes or backslashes that
/// need escaping in practice; they are escaped all the same.
size_t marker_json(char* out, size_t cap, const char* reason, int sig, long when) {
  size_t n = 0;
  auto add = [&](const char* s) {
    for (; *s && n + 2 < cap; ++s) out[n++] = *s;
  };
  auto add_escaped = [&](const char* s) {
    for (; *s && n + 3 < cap; ++s) {
      if (*s == '"' || *s == '\\') out[n++] = '\\';
      out[n++] = static_cast<unsigned char>(*s) < 0x20 ? ' ' : *s;
    }
  };
  char num[24];
  add("{\"state\": \"interrupted\", \"reason\": \"");
  add_escaped(reason);
  add("\", \"signal\": ");
  num[format_decimal_signal_safe(num, static_cast<unsigned long>(sig))] = '\0';
  add(num);
  add(", \"time_unix\": ");
  num[format_decimal_signal_safe(num, static_cast<unsigned long>(when))] = '\0';
  add(num);
  add("}\n");
  return n;
}

/// <dir>/INCOMPLETE via a temporary file and rename (signal-safe).
bool write_marker(const char* dir, const char* text, size_t len) {
  char tmp[k_path_max + 32], dst[k_path_max + 32];
  size_t d = std::strlen(dir);
  if (d + 32 > sizeof tmp) return false;
  std::memcpy(tmp, dir, d);
  std::memcpy(tmp + d, "/.INCOMPLETE.tmp", 17);
  std::memcpy(dst, dir, d);
  std::memcpy(dst + d, "/INCOMPLETE", 12);
  int fd = ::open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = ::write(fd, text, len) == static_cast<ssize_t>(len);
  ::close(fd);
  return ok && ::rename(tmp, dst) == 0;
}

void run_recorder(run_slot& s) {
  if (s.rec_argv[0] == nullptr) return;
  pid_t pid = ::vfork();
  if (pid == 0) {
    ::dup2(STDERR_FILENO, STDOUT_FILENO);  // the CLI's stdout stays its own
    ::execve(s.rec_argv[0], s.rec_argv, environ);
    ::_exit(127);
  }
  if (pid < 0) return;
  for (int i = 0; i < 500; ++i) {  // at most 5 s
    if (::waitpid(pid, nullptr, WNOHANG) == pid) return;
    timespec ts{0, 10 * 1000 * 1000};
    ::nanosleep(&ts, nullptr);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

void prepare_recorder(run_slot& s, const std::string& dir) {
  std::lock_guard<std::mutex> l(g_rec_mu);
  s.rec_argv[0] = nullptr;
  if (g_recorder.empty() || g_recorder.size() + 2 > static_cast<size_t>(k_rec_args)) return;
  size_t off = 0;
  int i = 0;
  auto add = [&](const std::string& a) {
    if (off + a.size() + 1 > k_rec_max) return false;
    std::memcpy(s.rec_buf + off, a.c_str(), a.size() + 1);
    s.rec_argv[i++] = s.rec_buf + off;
    off += a.size() + 1;
    return true;
  };
  for (const auto& a : g_recorder)
    if (!add(a)) return void(s.rec_argv[0] = nullptr);
  if (!add(dir)) return void(s.rec_argv[0] = nullptr);
  s.rec_argv[i] = nullptr;
}

}  // namespace

status mark_incomplete(const fs::path& ws, const std::string& reason, int signal) {
  json j = {{"state", "interrupted"}, {"reason", reason}, {"signal", signal},
            {"time_unix", static_cast<int64_t>(std::time(nullptr))}};
  return write_file_atomic(ws / k_incomplete_file, dump_compact(j) + "\n");
}

std::string incomplete_reason(const fs::path& ws) {
  std::error_code ec;
  if (!fs::exists(ws / k_incomplete_file, ec)) return {};
  auto j = read_json_file(ws / k_incomplete_file);
  std::string r = j.ok() ? json_string(*j, "reason") : std::string();
  return r.empty() ? std::string("interrupted") : r;
}

void note_run_in_progress(const fs::path& ws) {
  std::string dir = absolute_path(ws).string();
  if (dir.size() + 1 > k_path_max) return;
  for (auto& s : g_runs) {
    int expected = 0;
    if (!s.state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(s.dir, dir.c_str(), dir.size() + 1);
    prepare_recorder(s, dir);
    s.state = 2;
    return;
  }
}

void note_run_finished(const fs::path& ws) {
  std::string dir = absolute_path(ws).string();
  for (auto& s : g_runs) {
    int expected = 2;
    if (s.state.load() == 2 && dir == s.dir) s.state.compare_exchange_strong(expected, 0);
  }
}

void set_interrupt_recorder(const std::vector<std::string>& argv_prefix) {
  std::lock_guard<std::mutex> l(g_rec_mu);
  g_recorder = argv_prefix;
}

void interrupt_runs_signal_safe(int signal, int phase) {
  for (auto& s : g_runs) {
    if (phase == 1) {
      int expected = 2;
      if (!s.state.compare_exchange_strong(expected, 3)) continue;
      char reason[64] = "interrupted by ";
      std::strcat(reason, signal_word(signal));
      char text[512];
      size_t len = marker_json(text, sizeof text, reason, signal, static_cast<long>(std::time(nullptr)));
      bool ok = write_marker(s.dir, text, len);
      put(STDERR_FILENO, "magpie: ");
      put(STDERR_FILENO, reason);
      put(STDERR_FILENO, ": the run did not finish; workspace ");
      put(STDERR_FILENO, s.dir);
      put(STDERR_FILENO, ok ? " is marked INCOMPLETE\n" : " could not be marked INCOMPLETE\n");
    } else if (s.state.load() == 3) {
      run_recorder(s);
    }
  }
}

}  // namespace magpie
