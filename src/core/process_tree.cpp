// Process trees (see process_tree.h). The /proc scanner below is async-signal-safe (raw
// syscalls, caller-provided buffers), so the Ctrl-C path and the normal paths share it.
#include "core/process_tree.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

#include "core/proc_stat.h"
#include "core/strings.h"

namespace magpie {

namespace {

constexpr const char* k_tree_env = "MAGPIE_PROCESS_TREE";
std::atomic<bool> g_subreaper{false};
std::atomic<int> g_tag_counter{0};

constexpr int k_max_kept = 64;
std::atomic<pid_t> g_kept[k_max_kept];
constexpr int k_max_direct = 1024;
std::atomic<pid_t> g_direct[k_max_direct];

struct proc_entry {
  pid_t pid, ppid;
  char state;
};

// ---- async-signal-safe helpers ----

/// ppid and state of `pid` (core/proc_stat.h). False when the process is gone.
bool read_stat(pid_t pid, pid_t* ppid, char* state) {
  proc_stat st;
  if (!read_proc_stat(pid, &st)) return false;
  *ppid = st.ppid;
  *state = st.state;
  return true;
}

/// Every process of /proc into `out` (at most `cap`); returns the count.
size_t scan_proc(proc_entry* out, size_t cap) {
  int fd = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  alignas(8) char buf[8192];
  size_t n = 0;
  for (;;) {
    long got = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (got <= 0) break;
    for (long off = 0; off < got;) {
      // struct linux_dirent64 { u64 d_ino; s64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
      unsigned short reclen;
      std::memcpy(&reclen, buf + off + 16, sizeof reclen);
      const char* name = buf + off + 19;
      off += reclen;
      if (name[0] < '1' || name[0] > '9') continue;
      long pid = 0;
      bool digits = true;
      for (const char* p = name; *p; ++p) {
        if (*p < '0' || *p > '9') { digits = false; break; }
        pid = pid * 10 + (*p - '0');
      }
      if (!digits || n >= cap) continue;
      proc_entry e{static_cast<pid_t>(pid), 0, '?'};
      if (read_stat(e.pid, &e.ppid, &e.state)) out[n++] = e;
    }
  }
  ::close(fd);
  return n;
}

bool is_kept(pid_t p) {
  for (auto& k : g_kept)
    if (k.load() == p) return true;
  return false;
}

/// Appends to `out` (which holds `count` pids, roots first) every descendant of out[0..count)
/// found in `all`, skipping kept processes and their trees. Returns the new count.
size_t add_descendants(const proc_entry* all, size_t n_all, pid_t* out, size_t count, size_t cap) {
  for (size_t i = 0; i < count; ++i)
    for (size_t j = 0; j < n_all && count < cap; ++j)
      if (all[j].ppid == out[i] && all[j].pid != out[i] && !is_kept(all[j].pid)) out[count++] = all[j].pid;
  return count;
}

/// Alive and not a zombie.
bool running(pid_t p) {
  pid_t pp;
  char st;
  return read_stat(p, &pp, &st) && st != 'Z' && st != 'X';
}

void signal_member(pid_t p, int sig) {
  pid_t g = static_cast<pid_t>(::syscall(SYS_getpgid, p));
  if (g > 1 && g != ::getpgrp()) ::kill(-g, sig);
  ::kill(p, sig);
}

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  ::nanosleep(&ts, nullptr);
}

bool is_direct(pid_t p) {
  for (auto& d : g_direct)
    if (d.load() == p) return true;
  return false;
}

// ---- normal-context helpers ----

std::vector<proc_entry> scan_all() {
  std::vector<proc_entry> v(32768);
  v.resize(scan_proc(v.data(), v.size()));
  return v;
}

std::vector<pid_t> descendants_of(const std::vector<proc_entry>& all, std::vector<pid_t> roots) {
  size_t n = roots.size(), cap = all.size() + n;
  roots.resize(cap);
  roots.resize(add_descendants(all.data(), all.size(), roots.data(), n, cap));
  return roots;
}

/// True when `pid`'s MAGPIE_PROCESS_TREE chain has `tag` as one of its components.
bool carries_tag(pid_t pid, const std::string& tag) {
  const auto chain = process_tree_chain(pid);
  return std::find(chain.begin(), chain.end(), tag) != chain.end();
}

}  // namespace

status become_subreaper() {
  if (g_subreaper.load()) return ok_status();
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
    return io_error("prctl(PR_SET_CHILD_SUBREAPER): %s", std::strerror(errno));
  g_subreaper = true;
  return ok_status();
}

bool is_subreaper() { return g_subreaper.load(); }

std::string new_tree_tag() {
  return std::to_string(static_cast<long>(::getpid())) + "." + std::to_string(g_tag_counter.fetch_add(1) + 1);
}

std::string child_tree_chain(const std::string& tag) {
  const char* ours = std::getenv(k_tree_env);
  return ours != nullptr && *ours != '\0' ? std::string(ours) + ":" + tag : tag;
}

std::vector<std::string> process_tree_chain(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  if (!f) return {};
  std::string env((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  constexpr std::string_view key = "MAGPIE_PROCESS_TREE=";
  std::vector<std::string> out;  // every entry's components: an environment may name the key twice
  for (size_t pos = 0; pos < env.size();) {
    size_t end = env.find('\0', pos);
    if (end == std::string::npos) end = env.size();
    std::string_view var(env.data() + pos, end - pos);
    if (starts_with(var, key))
      for (auto& part : split(var.substr(key.size()), ':')) out.push_back(std::move(part));
    pos = end + 1;
  }
  return out;
}

std::vector<pid_t> process_tree(pid_t root) {
  if (root <= 0) return {};
  return descendants_of(scan_all(), {root});
}

std::vector<pid_t> tree_members(pid_t root, const std::string& tag) {
  auto all = scan_all();
  std::vector<pid_t> out;
  std::set<pid_t> seen;
  if (root > 0 && !is_kept(root))
    for (pid_t p : descendants_of(all, {root}))
      if (seen.insert(p).second) out.push_back(p);
  if (!tag.empty()) {
    for (pid_t p : descendants_of(all, {::getpid()})) {
      if (p == ::getpid() || seen.count(p) || !carries_tag(p, tag)) continue;
      for (pid_t q : descendants_of(all, {p}))  // its whole subtree, scrubbed environments included
        if (seen.insert(q).second) out.push_back(q);
    }
  }
  out.erase(std::remove_if(out.begin(), out.end(), [&](pid_t p) { return p != root && !running(p); }), out.end());
  return out;
}

size_t end_process_tree(pid_t root, const std::string& tag, double grace_s) {
  std::vector<pid_t> members = tree_members(root, tag);
  if (members.empty()) return 0;
  for (pid_t p : members) signal_member(p, SIGTERM);
  std::set<pid_t> all(members.begin(), members.end());
  double waited = 0;
  auto any_running = [&] {
    for (pid_t p : all)
      if (running(p)) return true;
    return false;
  };
  while (waited < grace_s && any_running()) {
    sleep_ms(20);
    waited += 0.02;
  }
  for (pid_t p : tree_members(root, tag)) all.insert(p);  // members forked meanwhile
  for (pid_t p : all)
    if (running(p)) signal_member(p, SIGKILL);
  // Reap what became our zombies (re-parented members), leaving root's status to its owner.
  for (int round = 0; round < 25; ++round) {
    bool pending = false;
    for (pid_t p : all) {
      if (p == root || is_direct(p)) continue;
      pid_t pp;
      char st;
      if (!read_stat(p, &pp, &st) || pp != ::getpid()) continue;
      if (::waitpid(p, nullptr, WNOHANG) == 0) pending = true;
    }
    if (!pending) break;
    sleep_ms(8);
  }
  return all.size();
}

void end_all_descendants_signal_safe(double grace_s) {
  static proc_entry all[32768];
  static pid_t tree[32768];
  const size_t cap = sizeof tree / sizeof tree[0];
  for (int pass = 0; pass < 2; ++pass) {
    size_t n_all = scan_proc(all, cap);
    tree[0] = ::getpid();
    size_t n = add_descendants(all, n_all, tree, 1, cap);
    if (n <= 1) return;
    for (size_t i = 1; i < n; ++i) signal_member(tree[i], pass == 0 ? SIGTERM : SIGKILL);
    if (pass == 1) return;
    for (long waited = 0; waited < static_cast<long>(grace_s * 1000); waited += 20) {
      bool any = false;
      for (size_t i = 1; i < n && !any; ++i) any = running(tree[i]);
      if (!any) break;
      sleep_ms(20);
    }
  }
}

void keep_on_exit(pid_t pid) {
  for (auto& k : g_kept) {
    pid_t expected = 0;
    if (k.compare_exchange_strong(expected, pid)) return;
  }
}

void note_direct_child(pid_t pid) {
  for (auto& d : g_direct) {
    pid_t expected = 0;
    if (d.compare_exchange_strong(expected, pid)) return;
  }
}

void forget_direct_child(pid_t pid) {
  for (auto& d : g_direct) {
    pid_t expected = pid;
    if (d.compare_exchange_strong(expected, 0)) return;
  }
}

void reap_orphans() {
  if (!is_subreaper()) return;
  for (const auto& e : scan_all())
    if (e.ppid == ::getpid() && e.state == 'Z' && !is_direct(e.pid)) ::waitpid(e.pid, nullptr, WNOHANG);
}

size_t format_decimal_signal_safe(char* out, unsigned long v) {
  char tmp[24];
  size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  for (size_t i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
  return n;
}

}  // namespace magpie
