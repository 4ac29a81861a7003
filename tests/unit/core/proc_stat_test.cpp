// The one /proc/<pid>/stat reader (core/proc_stat.h): comm with spaces, parentheses and ") "
// inside it, short and malformed lines, and a real process that renamed itself.
#include "core/proc_stat.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace magpie {
namespace {

// proc(5) fields 3..22 after the comm: state ppid pgrp session tty tpgid flags minflt cminflt
// majflt cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime, then more.
const std::string k_tail = " S 17 18 19 0 -1 4194560 100 0 0 0 11 12 13 14 20 0 1 0 98765 1234 5 18446744073709551615";

proc_stat parsed(const std::string& line) {
  proc_stat s;
  EXPECT_TRUE(parse_proc_stat(line.data(), line.size(), &s)) << line;
  return s;
}

TEST(proc_stat, parses_the_fields_of_a_plain_line) {
  const proc_stat s = parsed("4242 (bash)" + k_tail);
  EXPECT_EQ(s.pid, 4242);
  EXPECT_STREQ(s.comm, "bash");
  EXPECT_EQ(s.state, 'S');
  EXPECT_EQ(s.ppid, 17);
  EXPECT_EQ(s.pgrp, 18);
  EXPECT_EQ(s.session, 19);
  EXPECT_EQ(s.utime, 11u);
  EXPECT_EQ(s.stime, 12u);
  EXPECT_EQ(s.cutime, 13u);
  EXPECT_EQ(s.cstime, 14u);
  EXPECT_EQ(s.start_time, 98765u);
}

TEST(proc_stat, a_comm_holding_close_paren_space_does_not_shift_the_fields) {
  // A process may name itself so that a reader splitting at the first ')' reads forged fields:
  // here state 'R', parent 1, group 2, session 3.
  const std::vector<std::string> comms = {") R 1 2 3 4", "a) (b", "x ) ) )", "()", " ", "(", ")"};
  for (const auto& comm : comms) {
    const proc_stat s = parsed("77 (" + comm + ")" + k_tail);
    EXPECT_STREQ(s.comm, comm.c_str());
    EXPECT_EQ(s.state, 'S') << comm;
    EXPECT_EQ(s.ppid, 17) << comm;
    EXPECT_EQ(s.pgrp, 18) << comm;
    EXPECT_EQ(s.session, 19) << comm;
    EXPECT_EQ(s.start_time, 98765u) << comm;
  }
  // A newline in the comm is a byte like the others.
  EXPECT_STREQ(parsed("77 (a\nb)" + k_tail).comm, "a\nb");
}

TEST(proc_stat, a_long_comm_is_cut_not_overflowed) {
  const std::string comm(200, 'k');
  const proc_stat s = parsed("5 (" + comm + ")" + k_tail);
  EXPECT_EQ(std::strlen(s.comm), sizeof s.comm - 1);
  EXPECT_EQ(s.ppid, 17);
}

TEST(proc_stat, a_number_beyond_64_bits_is_clamped_not_wrapped) {
  const proc_stat s = parsed("9 (x) S 1 2 3 0 -1 0 0 0 0 0 99999999999999999999999 -99999999999999999999999 0 0 20 0 1 0 5");
  EXPECT_EQ(s.utime, 9223372036854775807ull);
  EXPECT_EQ(s.stime, 0u);  // negative: none
  EXPECT_EQ(s.start_time, 5u);
}

TEST(proc_stat, refuses_what_is_not_a_stat_line) {
  proc_stat s;
  const std::vector<std::string> bad_lines = {
      "", "12 bash S 1 2 3", "12 (bash",
      "12 (bash) S 1 2 3 0 -1 0 0 0 0 0 1 2 3 4 20 0 1 0",  // 21 fields
      "12 (bash) S x 18 19 0 -1 0 0 0 0 0 11 12 13 14 20 0 1 0 98765", "x (bash)" + k_tail,
      "12 (bash) SS 17 18 19 0 -1 0 0 0 0 0 1 2 3 4 20 0 1 0 5"};
  for (const auto& bad : bad_lines) EXPECT_FALSE(parse_proc_stat(bad.data(), bad.size(), &s)) << bad;
}

TEST(proc_stat, reads_a_real_process_that_named_itself_with_a_close_paren) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::prctl(PR_SET_NAME, ") R 1 1 1 1 ", 0, 0, 0);
    (void)!::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  ::close(ready[1]);
  const auto s = proc_stat_of(child);
  const auto self = proc_stat_of(::getpid());
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_TRUE(s.has_value());
  ASSERT_TRUE(self.has_value());
  EXPECT_STREQ(s->comm, ") R 1 1 1 1 ");  // 12 bytes: within the kernel's 15
  EXPECT_EQ(s->pid, child);
  EXPECT_EQ(s->ppid, ::getpid());
  EXPECT_EQ(s->pgrp, ::getpgrp());
  EXPECT_EQ(s->session, ::getsid(0));
  EXPECT_GE(s->start_time, self->start_time);
  EXPECT_FALSE(proc_stat_of(child).has_value());  // reaped: gone
}

TEST(proc_stat, counts_this_process_cpu_time) {
  const auto t0 = std::chrono::steady_clock::now();
  volatile uint64_t x = 0;
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(60)) x = x + 1;
  const auto s = proc_stat_of(::getpid());
  ASSERT_TRUE(s.has_value());
  EXPECT_GT(proc_ticks_ns(s->utime + s->stime), 0u);
  EXPECT_EQ(proc_ticks_ns(0), 0u);
}

}  // namespace
}  // namespace magpie
