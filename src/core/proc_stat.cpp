// /proc/<pid>/stat (see proc_stat.h). Raw open/read into a stack buffer and a hand-written
// number parser: async-signal-safe.
#include "core/proc_stat.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "core/process_tree.h"

namespace magpie {

namespace {

/// Parses a decimal number (an optional '-', then digits) at [p, end) up to the next space or
/// the end; advances p past it. False when there is none.
bool next_number(const char*& p, const char* end, long long* v) {
  while (p < end && *p == ' ') ++p;
  bool neg = false;
  if (p < end && *p == '-') {
    neg = true;
    ++p;
  }
  const char* digits = p;
  constexpr unsigned long long k_max = 9223372036854775807ull;  // LLONG_MAX: larger is clamped
  unsigned long long x = 0;
  for (; p < end && *p >= '0' && *p <= '9'; ++p)
    x = x > (k_max - 9) / 10 ? k_max : x * 10 + static_cast<unsigned long long>(*p - '0');
  if (p == digits || (p < end && *p != ' ' && *p != '\n')) return false;
  *v = neg ? -static_cast<long long>(x) : static_cast<long long>(x);
  return true;
}

}  // namespace

bool parse_proc_stat(const char* text, size_t len, proc_stat* out) {
  const char* end = text + len;
  const char* open = static_cast<const char*>(std::memchr(text, '(', len));
  const char* close = nullptr;  // the comm may hold ')': the last one of the line ends it
  for (const char* p = end; p > text; --p)
    if (p[-1] == ')') {
      close = p - 1;
      break;
    }
  if (open == nullptr || close == nullptr || close < open) return false;
  proc_stat s;
  const char* p = text;
  long long v = 0;
  if (!next_number(p, open, &v) || v <= 0) return false;
  s.pid = static_cast<pid_t>(v);
  const size_t n = std::min(static_cast<size_t>(close - open - 1), sizeof s.comm - 1);
  std::memcpy(s.comm, open + 1, n);
  s.comm[n] = '\0';
  p = close + 1;
  if (end - p < 4 || p[0] != ' ' || p[2] != ' ') return false;
  s.state = p[1];
  p += 2;
  long long f[23] = {};  // f[k]: field k, 4..22
  for (int k = 4; k <= 22; ++k)
    if (!next_number(p, end, &f[k])) return false;
  s.ppid = static_cast<pid_t>(f[4]);
  s.pgrp = static_cast<pid_t>(f[5]);
  s.session = static_cast<pid_t>(f[6]);
  auto u = [](long long x) { return x > 0 ? static_cast<uint64_t>(x) : 0; };
  s.utime = u(f[14]);
  s.stime = u(f[15]);
  s.cutime = u(f[16]);
  s.cstime = u(f[17]);
  s.start_time = u(f[22]);
  *out = s;
  return true;
}

bool read_proc_stat(pid_t pid, proc_stat* out) {
  if (pid <= 0) return false;
  char path[40] = "/proc/";
  size_t n = 6 + format_decimal_signal_safe(path + 6, static_cast<unsigned long>(pid));
  std::memcpy(path + n, "/stat", 6);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1536];  // 52 fields of at most 20 digits and a 64-byte comm
  ssize_t r = ::read(fd, buf, sizeof buf);
  ::close(fd);
  return r > 0 && parse_proc_stat(buf, static_cast<size_t>(r), out);
}

std::optional<proc_stat> proc_stat_of(pid_t pid) {
  proc_stat s;
  if (!read_proc_stat(pid, &s)) return std::nullopt;
  return s;
}

uint64_t proc_ticks_ns(uint64_t ticks) {
  static const long hz = ::sysconf(_SC_CLK_TCK);
  return ticks * (1000000000ull / static_cast<unsigned long long>(hz > 0 ? hz : 100));
}

}  // namespace magpie
