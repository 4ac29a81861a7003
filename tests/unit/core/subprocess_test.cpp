#include "core/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/strings.h"

#include <cstring>
#include <string>

using namespace magpie;

TEST(subprocess, captures_output_and_exit_code) {
  spawn_spec s;
  s.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"};
  auto r = run_command(s, 10);
  ASSERT_TRUE(r.ok()) << r.get_status().to_string();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_FALSE(r->success());
  EXPECT_EQ(r->describe(), "exit code 3");
}

TEST(subprocess, unknown_program_is_not_found) {
  spawn_spec s;
  s.argv = {"magpie-no-such-program-xyz"};
  auto r = run_command(s, 5);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.get_status().code(), status_code::not_found);
}

TEST(subprocess, env_merge_and_cwd) {
  spawn_spec s;
  s.argv = {"sh", "-c", "pwd; echo $MAGPIE_T; echo $PATH"};
  s.cwd = "/tmp";
  s.env = {{"MAGPIE_T", "v1"}, {"PATH", "/magpie-first"}};
  auto r = run_command(s, 10);
  ASSERT_TRUE(r.ok());
  auto lines = split(r->out, '\n');
  EXPECT_EQ(lines[0], "/tmp");
  EXPECT_EQ(lines[1], "v1");
  EXPECT_TRUE(starts_with(lines[2], "/magpie-first:"));
}

TEST(subprocess, timeout_kills_the_whole_group) {
  char pidfile[] = "/tmp/magpie_sp_XXXXXX";
  int fd = mkstemp(pidfile);
  ASSERT_GE(fd, 0);
  close(fd);
  spawn_spec s;
  // The grandchild writes its pid, then both sleep; the group kill must reach it.
  s.argv = {"sh", "-c", std::string("sleep 30 & echo $! > ") + pidfile + "; wait"};
  s.kill_grace_s = 0.5;
  auto r = run_command(s, 0.5);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(r->wall_seconds, 5.0);
  FILE* f = fopen(pidfile, "r");
  ASSERT_NE(f, nullptr);
  int gpid = 0;
  ASSERT_EQ(fscanf(f, "%d", &gpid), 1);
  fclose(f);
  unlink(pidfile);
  usleep(100000);
  // Dead or a zombie awaiting its new parent's reap ('Z' in /proc/<pid>/stat) both count.
  bool alive = kill(gpid, 0) == 0;
  if (alive) {
    FILE* st = fopen(("/proc/" + std::to_string(gpid) + "/stat").c_str(), "r");
    char buf[512] = {0};
    if (st) {
      size_t n = fread(buf, 1, sizeof buf - 1, st);
      buf[n] = 0;
      fclose(st);
    }
    const char* rp = strrchr(buf, ')');
    alive = !(rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'));
  }
  EXPECT_FALSE(alive) << "grandchild " << gpid << " survived the group kill";
}

TEST(subprocess, stdin_data_is_delivered) {
  spawn_spec s;
  s.argv = {"cat"};
  s.stdin_data = std::string(200000, 'x');
  auto r = run_command(s, 10);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out.size(), 200000u);
}

TEST(subprocess, control_channel_round_trip) {
  spawn_spec s;
  s.control_channel = true;
  // Reads commands on fd 3, answers on fd 4, until "stop".
  s.argv = {"sh", "-c",
            "echo ready >&4; while read cmd <&3; do [ \"$cmd\" = stop ] && exit 0; echo \"got $cmd\" >&4; done"};
  auto c = child_process::spawn(s);
  ASSERT_TRUE(c.ok());
  auto& child = *c;
  auto l = child->read_control_line(5);
  ASSERT_TRUE(l.ok()) << l.get_status().to_string();
  EXPECT_EQ(*l, "ready");
  ASSERT_TRUE(child->write_control("sample").ok());
  l = child->read_control_line(5);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(*l, "got sample");
  ASSERT_TRUE(child->write_control("stop").ok());
  auto r = child->wait(5);
  EXPECT_EQ(r.exit_code, 0);
}

TEST(subprocess, control_read_reports_child_exit) {
  spawn_spec s;
  s.control_channel = true;
  s.argv = {"sh", "-c", "exit 4"};
  auto c = child_process::spawn(s);
  ASSERT_TRUE(c.ok());
  auto l = (*c)->read_control_line(5);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.get_status().code(), status_code::unavailable);
  EXPECT_NE(l.get_status().message().find("exit code 4"), std::string::npos);
}

TEST(subprocess, output_cap_counts_dropped_bytes) {
  spawn_spec s;
  s.argv = {"sh", "-c", "head -c 100000 /dev/zero"};
  s.capture_limit = 1000;
  auto r = run_command(s, 10);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out.size(), 1000u);
  EXPECT_EQ(r->out_dropped, 99000u);
}

TEST(subprocess, termination_signal_stops_live_children) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t parent = fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {  // plays "magpie": installs the handlers, starts a long child, waits
    close(fds[0]);
    install_termination_handlers();
    spawn_spec s;
    s.argv = {"sleep", "30"};
    auto c = child_process::spawn(s);
    if (!c.ok()) _exit(3);
    pid_t cp = (*c)->pid();
    if (write(fds[1], &cp, sizeof cp) != static_cast<ssize_t>(sizeof cp)) _exit(4);
    (*c)->wait(60);
    _exit(0);
  }
  close(fds[1]);
  pid_t child = 0;
  ASSERT_EQ(read(fds[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  close(fds[0]);
  ASSERT_EQ(kill(parent, SIGTERM), 0);
  int ws = 0;
  ASSERT_EQ(waitpid(parent, &ws, 0), parent);
  EXPECT_TRUE(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGTERM);
  usleep(200000);
  bool alive = kill(child, 0) == 0;
  if (alive) {  // a zombie awaiting its reaper counts as stopped
    FILE* st = fopen(("/proc/" + std::to_string(child) + "/stat").c_str(), "r");
    char buf[512] = {0};
    if (st) {
      size_t n = fread(buf, 1, sizeof buf - 1, st);
      buf[n] = 0;
      fclose(st);
    }
    const char* rp = strrchr(buf, ')');
    alive = !(rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'));
  }
  EXPECT_FALSE(alive) << "child " << child << " outlived its interrupted parent";
}

namespace {
char subprocess_test_state(pid_t pid) {
  std::string s;
  if (FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r")) {
    char buf[512];
    size_t n = std::fread(buf, 1, sizeof buf, f);
    s.assign(buf, n);
    std::fclose(f);
  }
  size_t rp = s.rfind(')');
  return rp == std::string::npos || rp + 2 >= s.size() ? 'X' : s[rp + 2];
}
status_or<std::unique_ptr<child_process>> subprocess_test_control_sh(const std::string& script) {
  spawn_spec s;
  s.control_channel = true;
  s.argv = {"sh", "-c", script};
  return child_process::spawn(s);
}
}  // namespace

// The kernel stops the child in the write of its reply: it never reaches the busy loop after
// the echo (left to run, it would be 'R' or 'S', never 'T'); disarmed, the next reply does not stop it.
TEST(subprocess, stop_group_on_reply_stops_the_writer) {
  auto c = subprocess_test_control_sh(
      "echo ready >&4; while read cmd <&3; do echo \"got $cmd\" >&4; i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; done");
  ASSERT_TRUE(c.ok());
  auto& child = *c;
  ASSERT_TRUE(child->read_control_line(5).ok());
  ASSERT_TRUE(child->stop_group_on_reply(true, {child->pid()}).ok());
  ASSERT_TRUE(child->write_control("one").ok());
  auto l = child->read_control_line(5);
  ASSERT_TRUE(l.ok()) << l.get_status().to_string();
  EXPECT_EQ(*l, "got one");
  ASSERT_TRUE(child->stop_group_on_reply(false).ok());
  char st = 'X';
  for (int i = 0; i < 200 && st != 'T'; ++i) {
    st = subprocess_test_state(child->pid());
    ::usleep(1000);
  }
  EXPECT_EQ(st, 'T');
  ::kill(-child->pid(), SIGCONT);
  ASSERT_TRUE(child->write_control("two").ok());  // disarmed: it answers and keeps running
  l = child->read_control_line(30);
  ASSERT_TRUE(l.ok()) << l.get_status().to_string();
  EXPECT_EQ(*l, "got two");
  ::usleep(20000);
  EXPECT_NE(subprocess_test_state(child->pid()), 'T');
}
