#include "core/sandbox.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <climits>
#include <mutex>
#include <utility>

#include "core/strings.h"
#include "core/subprocess.h"

extern char** environ;

namespace magpie {

namespace {

constexpr int k_ns_flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC;

[[noreturn]] void die(const char* what, const std::string& arg = "") {
  std::fprintf(stderr, "magpie sandbox: %s%s%s: %s\n", what, arg.empty() ? "" : " ", arg.c_str(), std::strerror(errno));
  std::_Exit(125);
}

bool write_file(const char* path, const std::string& text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

// Maps our own uid / gid to themselves inside the new user namespace (root stays uid 0 there,
// but without any capability once the command runs: see drop_capabilities).
void map_ids(uid_t uid, gid_t gid) {
  if (!write_file("/proc/self/setgroups", "deny")) die("write /proc/self/setgroups");
  if (!write_file("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1\n")) die("write uid_map");
  if (!write_file("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1\n")) die("write gid_map");
}

int mount_setattr_rec(const char* path, uint64_t set, uint64_t clr, bool recursive) {
  mount_attr a{};
  a.attr_set = set;
  a.attr_clr = clr;
  return static_cast<int>(::syscall(SYS_mount_setattr, AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &a, sizeof a));
}

void mkdirs(const std::string& p) {
  for (size_t i = 1; i <= p.size(); ++i)
    if (i == p.size() || p[i] == '/') ::mkdir(p.substr(0, i).c_str(), 0755);
}

void tmpfs(const char* where, const char* opts) {
  if (::mount("tmpfs", where, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0) die("mount tmpfs on", where);
}

// No capability survives the exec: an empty bounding set, no inheritable or ambient ones, and
// no_new_privs (so no set-uid file gives any back). uid 0 inside therefore cannot remount, mount
// or undo anything set up here.
void drop_capabilities() {
  for (int c = 0; c <= 63; ++c) ::prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct d[2]{};
  if (::syscall(SYS_capset, &h, d) != 0) die("capset");
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
}

// PID 1 of the new namespaces: the private mount tree, then the command.
[[noreturn]] void enter(const std::vector<std::string>& rw, const std::vector<std::string>& hide,
                        const std::vector<std::string>& keep, const std::vector<std::string>& cmd,
                        const std::string& cwd, int status_fd) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);  // the helper killed: the namespace goes too
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) die("make / rslave");
  // Writable directories are opened before anything covers them.
  std::vector<int> rw_fd;
  for (const auto& d : rw) {
    int fd = ::open(d.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) die("open", d);
    rw_fd.push_back(fd);
  }
  // What the command must still read under /tmp once the private /tmp covers it: its working
  // directory, the directory of its executable and of every absolute path among its arguments
  // (a test's scratch workspace lives there), and what the caller names (--ro: magpie's own
  // harness files when magpie itself lives under /tmp). Bound read-only; hides below apply
  // inside them.
  std::vector<std::string> ro;
  auto under_tmp = [](const std::string& p) { return p.rfind("/tmp/", 0) == 0; };
  auto add_ro = [&](std::string d) {
    struct stat st{};
    if (!under_tmp(d) || ::stat(d.c_str(), &st) != 0) return;
    if (!S_ISDIR(st.st_mode)) d = d.substr(0, d.rfind('/'));
    if (under_tmp(d) && std::find(ro.begin(), ro.end(), d) == ro.end()) ro.push_back(d);
  };
  add_ro(cwd);
  for (const auto& d : keep) add_ro(d);
  for (const auto& a : cmd)
    if (!a.empty() && a[0] == '/') add_ro(a);
  // Bound in this order: real directories before paths through a symbolic link (a build's
  // python/ -> the source tree's), each group parents first; a path already visible through an
  // earlier bind (a link inside a bound directory whose target is bound too) is left as it is.
  std::vector<std::pair<bool, std::string>> order;  // (through a link, path): resolved once each
  for (auto& d : ro) {
    char real[PATH_MAX];
    order.emplace_back(::realpath(d.c_str(), real) == nullptr || d != real, std::move(d));
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? !a.first : a.second.size() < b.second.size();
  });
  for (size_t i = 0; i < ro.size(); ++i) ro[i] = std::move(order[i].second);
  std::vector<int> ro_fd;
  for (const auto& d : ro) ro_fd.push_back(::open(d.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (mount_setattr_rec("/", MOUNT_ATTR_RDONLY, 0, true) != 0) die("make / read-only");
  if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) die("mount /proc");
  tmpfs("/tmp", "mode=1777");
  if (::access("/dev/shm", F_OK) == 0) tmpfs("/dev/shm", "mode=1777");
  for (size_t i = 0; i < ro.size(); ++i) {
    if (ro_fd[i] < 0) continue;
    struct stat seen{};
    if (::stat(ro[i].c_str(), &seen) == 0 && S_ISDIR(seen.st_mode)) {
      ::close(ro_fd[i]);
      continue;
    }
    mkdirs(ro[i]);
    std::string src = "/proc/self/fd/" + std::to_string(ro_fd[i]);
    if (::mount(src.c_str(), ro[i].c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) die("bind", ro[i]);
    if (mount_setattr_rec(ro[i].c_str(), MOUNT_ATTR_RDONLY, 0, true) != 0) die("make read-only", ro[i]);
    ::close(ro_fd[i]);
  }
  // A writable directory inside a hidden one is bound after the hide (it reappears in the empty
  // tmpfs); one that contains a hidden one before it (the hide then applies inside it).
  auto inside_hidden = [&](const std::string& d) {
    for (const auto& h : hide)
      if (d == h || d.rfind(h + "/", 0) == 0) return true;
    return false;
  };
  auto bind_rw = [&](size_t i) {
    mkdirs(rw[i]);  // inside a hidden (tmpfs) parent it does not exist yet
    std::string src = "/proc/self/fd/" + std::to_string(rw_fd[i]);
    if (::mount(src.c_str(), rw[i].c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) die("bind", rw[i]);
    if (mount_setattr_rec(rw[i].c_str(), 0, MOUNT_ATTR_RDONLY, false) != 0) die("make writable", rw[i]);
    ::close(rw_fd[i]);
  };
  for (size_t i = 0; i < rw.size(); ++i)
    if (!inside_hidden(rw[i])) bind_rw(i);
  std::vector<std::string> covered;  // a hidden path under /tmp is gone already
  for (const auto& h : hide) {
    if (::access(h.c_str(), F_OK) != 0) continue;
    tmpfs(h.c_str(), "mode=0755");
    covered.push_back(h);
  }
  for (size_t i = 0; i < rw.size(); ++i)
    if (inside_hidden(rw[i])) bind_rw(i);
  for (const auto& h : covered)
    if (mount_setattr_rec(h.c_str(), MOUNT_ATTR_RDONLY, 0, false) != 0)
      die("make read-only", h);
  if (::chdir(cwd.c_str()) != 0) die("chdir", cwd);  // onto the new mounts
  // A tiny init: PID 1 of a namespace gets no signal it has no handler for (so the supervisor's
  // SIGTERM to the process group would not end it) and must reap orphans. The command is its
  // child; its wait status goes back to the helper through `status_fd`.
  pid_t cmd_pid = ::fork();
  if (cmd_pid < 0) die("fork");
  if (cmd_pid == 0) {
    ::close(status_fd);
    drop_capabilities();
    std::vector<char*> av;
    for (const auto& a : cmd) av.push_back(const_cast<char*>(a.c_str()));
    av.push_back(nullptr);
    ::execve(av[0], av.data(), environ);
    die("exec", cmd[0]);
  }
  for (int fd = 0; fd < 3; ++fd) ::close(fd);  // the command alone holds the output pipes
  int st = 0;
  for (;;) {
    int s = 0;
    pid_t w = ::waitpid(-1, &s, 0);
    if (w == cmd_pid) {
      st = s;
      break;
    }
    if (w < 0 && errno != EINTR) break;
  }
  (void)!::write(status_fd, &st, sizeof st);
  std::_Exit(0);  // every process left in the namespace is killed with it
}

}  // namespace

void disable_sandbox() { ::setenv("MAGPIE_NO_SANDBOX", "1", 1); }

std::string sandbox_helper_exe() {
  if (const char* h = std::getenv("MAGPIE_SANDBOX_HELPER"); h != nullptr && *h) return h;
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string self(buf, static_cast<size_t>(n));
  std::string base = self.substr(self.rfind('/') + 1);
  return base == "magpie" ? self : "";
}

std::string sandbox_unavailable_reason() {
  if (const char* off = std::getenv("MAGPIE_NO_SANDBOX"); off != nullptr && std::string(off) == "1")
    return "disabled (MAGPIE_NO_SANDBOX=1 or --no-sandbox)";
  if (sandbox_helper_exe().empty()) return "no magpie executable to run the sandbox helper";
  static std::once_flag once;
  static std::string probed;
  std::call_once(once, [] {
    // The whole set-up, once: a container may allow the namespaces but not a fresh /proc.
    const char* tru = ::access("/bin/true", X_OK) == 0 ? "/bin/true" : "/usr/bin/true";
    spawn_spec sp;
    sp.argv = {sandbox_helper_exe(), "__sandbox", "--", tru};
    auto r = run_command(sp, 30);
    if (!r.ok()) probed = "cannot start the sandbox helper: " + r.get_status().message();
    else if (!r->success())
      probed = "the kernel refused the sandbox (" + std::string(trim(r->output_tail(300))) +
               "; user namespaces disabled by sysctl or a container's policy?)";
  });
  return probed;
}

std::vector<std::string> sandbox_argv(const sandbox_spec& s, const std::string& exe,
                                      const std::vector<std::string>& argv) {
  std::vector<std::string> out{"magpie", "__sandbox"};
  for (const auto& d : s.writable) out.insert(out.end(), {"--rw", d.string()});
  for (const auto& d : s.hidden) out.insert(out.end(), {"--hide", d.string()});
  for (const auto& d : s.readable) out.insert(out.end(), {"--ro", d.string()});
  out.push_back("--");
  out.push_back(exe);
  out.insert(out.end(), argv.begin() + (argv.empty() ? 0 : 1), argv.end());
  return out;
}

void sandbox_helper_main(int argc, char** argv) {
  std::vector<std::string> rw, hide, keep, cmd;
  int i = 2;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") break;
    if (i + 1 >= argc || (a != "--rw" && a != "--hide" && a != "--ro")) {
      std::fprintf(stderr, "usage: magpie __sandbox [--rw DIR]... [--hide DIR]... [--ro DIR]... -- EXE ARGS...\n");
      std::_Exit(125);
    }
    (a == "--rw" ? rw : a == "--hide" ? hide : keep).push_back(argv[++i]);
  }
  for (++i; i < argc; ++i) cmd.push_back(argv[i]);
  if (cmd.empty()) std::_Exit(125);
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd) == nullptr) die("getcwd");
  uid_t uid = ::getuid();
  gid_t gid = ::getgid();
  if (::unshare(k_ns_flags) != 0) die("unshare");
  map_ids(uid, gid);
  int sp[2];
  if (::pipe2(sp, O_CLOEXEC) != 0) die("pipe");
  pid_t pid = ::fork();  // the first child of the new PID namespace is its PID 1
  if (pid < 0) die("fork");
  if (pid == 0) {
    ::close(sp[0]);
    enter(rw, hide, keep, cmd, cwd, sp[1]);
  }
  ::close(sp[1]);
  // Outside: wait, then end as the command ended (signals from the supervisor reach the command
  // through the process group and the /proc tree walk, both in host PIDs).
  int st = 0, init_st = 0;
  ssize_t got = -1;
  do got = ::read(sp[0], &st, sizeof st);
  while (got < 0 && errno == EINTR);
  while (::waitpid(pid, &init_st, 0) < 0 && errno == EINTR) {
  }
  if (got != sizeof st) st = init_st;  // set-up failed (125 and a message) or the init was killed
  if (WIFSIGNALED(st)) {
    ::signal(WTERMSIG(st), SIG_DFL);
    ::raise(WTERMSIG(st));
  }
  std::_Exit(WIFEXITED(st) ? WEXITSTATUS(st) : 125);
}

}  // namespace magpie
