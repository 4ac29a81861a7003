// Exchange memory, process-tree CPU time and stop-and-read (kernel/exchange.h).
#include "kernel/exchange.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

#include "core/proc_stat.h"
#include "core/strings.h"
#include "core/subprocess.h"

namespace magpie::kernel {

exchange_memory::~exchange_memory() {
  if (m_fd >= 0) ::close(m_fd);
}

status exchange_memory::create() {
  m_fd = ::memfd_create("magpie-exchange", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (m_fd < 0) return error(status_code::internal, "memfd_create (exchange memory): %s", std::strerror(errno));
  return ok_status();
}

status exchange_memory::adopt(const exchange_layout& layout) {
  if (!layout.announced)
    return parse_error("the harness announced no exchange memory (protocol 3 needs \"exchange\" in its ready line)");
  struct stat st{};
  if (::fstat(m_fd, &st) != 0) return error(status_code::internal, "fstat (exchange memory): %s", std::strerror(errno));
  m_bytes = static_cast<size_t>(st.st_size);
  size_t end = 0;
  for (const exchange_output& e : layout.outputs) {
    if (e.offset < end || e.offset + e.bytes > m_bytes)
      return parse_error("exchange output '%s': offset %zu, %zu bytes, outside the %zu-byte exchange memory or overlapping",
                         e.name.c_str(), e.offset, e.bytes, m_bytes);
    end = e.offset + e.bytes;
    m_outputs.push_back(e);
  }
  if (!layout.problem.empty()) return parse_error("%s", layout.problem.c_str());
  if (::fcntl(m_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
    return error(status_code::failed_precondition, "cannot seal the exchange memory (the harness sealed it first?): %s",
                 std::strerror(errno));
  return ok_status();
}

status_or<std::vector<tensor>> exchange_memory::read() const {
  std::vector<tensor> out;
  MAGPIE_RETURN_IF_ERROR(read_into(&out));
  return out;
}

namespace {

// pread of [offset, offset + bytes) of fd into dst, whole or an error.
status pread_all(int fd, uint8_t* dst, size_t bytes, size_t offset) {
  size_t done = 0;
  while (done < bytes) {
    ssize_t r = ::pread(fd, dst + done, bytes - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return error(status_code::io_error, "reading the exchange memory: %s", r < 0 ? std::strerror(errno) : "short read");
    done += static_cast<size_t>(r);
  }
  return ok_status();
}

constexpr size_t k_parallel_read_bytes = size_t{8} << 20;  // outputs from this size are read in slices

}  // namespace

status exchange_memory::read_into(std::vector<tensor>* out) const {
  out->resize(m_outputs.size());
  for (size_t i = 0; i < m_outputs.size(); ++i) {
    const exchange_output& o = m_outputs[i];
    tensor& t = (*out)[i];
    t.type = o.type;
    t.shape = o.shape;
    t.data.resize(o.bytes);  // the same size as last time: no allocation, no zero-fill
    const size_t slices = o.bytes < k_parallel_read_bytes ? 1 : std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 4);
    const size_t per = (o.bytes + slices - 1) / slices;
    std::vector<status> st(slices, ok_status());
    std::vector<std::thread> pool;
    for (size_t s = 1; s < slices; ++s) {
      const size_t from = std::min(o.bytes, s * per), to = std::min(o.bytes, (s + 1) * per);
      pool.emplace_back([&, s, from, to] { st[s] = pread_all(m_fd, t.data.data() + from, to - from, o.offset + from); });
    }
    st[0] = pread_all(m_fd, t.data.data(), std::min(o.bytes, per), o.offset);
    for (auto& th : pool) th.join();
    for (const auto& x : st) MAGPIE_RETURN_IF_ERROR(x);
  }
  return ok_status();
}

std::vector<pid_t> live_descendants(pid_t root) {
  std::vector<pid_t> out{root};
  for (size_t i = 0; i < out.size() && out.size() < 4096; ++i) {
    const std::string task = "/proc/" + std::to_string(out[i]) + "/task";
    std::vector<std::string> tids;
    if (auto* d = ::opendir(task.c_str())) {
      while (dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') tids.emplace_back(e->d_name);
      ::closedir(d);
    }
    for (const auto& tid : tids) {
      std::ifstream f(task + "/" + tid + "/children");
      long c = 0;
      while (f >> c)
        if (std::find(out.begin(), out.end(), static_cast<pid_t>(c)) == out.end()) out.push_back(static_cast<pid_t>(c));
    }
  }
  return out;
}

namespace {

// CPU time of `pid`'s waited-for children (cutime + cstime), in ns.
uint64_t reaped_children_ns(pid_t pid) {
  const auto st = proc_stat_of(pid);
  return st ? proc_ticks_ns(st->cutime + st->cstime) : 0;
}

char proc_state(pid_t pid) {
  const auto st = proc_stat_of(pid);
  return st ? st->state : 'X';
}

}  // namespace

uint64_t tree_cpu_ns(pid_t root) {
  uint64_t total = 0;
  for (pid_t p : live_descendants(root)) {
    clockid_t c;
    timespec ts{};
    if (::clock_getcpuclockid(p, &c) == 0 && ::clock_gettime(c, &ts) == 0)
      total += static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
    total += reaped_children_ns(p);
  }
  return total;
}

std::vector<std::pair<pid_t, uint64_t>> thread_cpu_ns(pid_t root) {
  std::vector<std::pair<pid_t, uint64_t>> out;
  for (pid_t p : live_descendants(root)) {
    const std::string task = "/proc/" + std::to_string(p) + "/task";
    if (auto* d = ::opendir(task.c_str())) {
      while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        std::ifstream f(task + "/" + e->d_name + "/schedstat");  // first field: time on the CPU, ns
        unsigned long long ns = 0;
        if (f >> ns) out.emplace_back(static_cast<pid_t>(std::atoi(e->d_name)), ns);
      }
      ::closedir(d);
    }
  }
  return out;
}

uint64_t busiest_thread_ns(const std::vector<std::pair<pid_t, uint64_t>>& before,
                           const std::vector<std::pair<pid_t, uint64_t>>& after) {
  uint64_t best = 0;
  for (const auto& [tid, ns] : after) {
    auto it = std::find_if(before.begin(), before.end(), [t = tid](const auto& b) { return b.first == t; });
    const uint64_t was = it == before.end() ? 0 : it->second;
    best = std::max(best, ns > was ? ns - was : 0);
  }
  return best;
}

int online_cpus() {
  static const int n = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  return n;
}

status stop_tree(pid_t root, double timeout_s, std::vector<pid_t>* stopped) {
  stopped->clear();
  // The group first (the harness is a session leader; its processes are in its group unless
  // they left it): nothing of it runs on while the tree is walked.
  if (::getpgid(root) == root && ::kill(-root, SIGSTOP) == 0) stopped->push_back(root);
  // Twice: a process forked while the first pass ran is stopped by the second.
  for (int pass = 0; pass < 2; ++pass)
    for (pid_t p : live_descendants(root))
      if (std::find(stopped->begin(), stopped->end(), p) == stopped->end() && ::kill(p, SIGSTOP) == 0) stopped->push_back(p);
  const double t0 = monotonic_seconds();
  for (pid_t p : *stopped) {
    for (;;) {
      char st = proc_state(p);
      if (st == 'T' || st == 't' || st == 'Z' || st == 'X') break;
      if (monotonic_seconds() - t0 > timeout_s)
        return error(status_code::timeout, "process %d did not stop within %.1f s", static_cast<int>(p), timeout_s);
      ::usleep(50);
    }
  }
  return ok_status();
}

void resume_tree(const std::vector<pid_t>& stopped) {
  if (!stopped.empty() && ::getpgid(stopped.front()) == stopped.front()) ::kill(-stopped.front(), SIGCONT);
  for (pid_t p : stopped) ::kill(p, SIGCONT);
}

}  // namespace magpie::kernel
