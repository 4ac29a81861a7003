// The one reader of /proc/<pid>/stat (proc(5)) for every magpie module: the process tree, CPU
// accounting, stopping a harness's tree and attributing GPU holders all read it here.
//
// Field 2 (comm) is the process's name in parentheses, as the process set it (prctl PR_SET_NAME,
// the executable's name): it may hold spaces, parentheses and ") " itself, so the fields after it
// are found after the *last* ')' of the line — the ones after comm are numbers and one state
// letter, never a ')'. Everything here is async-signal-safe (raw syscalls, no allocation): the
// Ctrl-C path of core/process_tree.h reads the table with it.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace magpie {

struct proc_stat {
  pid_t pid = 0;       ///< field 1
  char comm[64] = {};  ///< field 2 without its parentheses, NUL-terminated (cut at 63 bytes)
  char state = '?';    ///< field 3: R, S, D, T, t, Z, X, ...
  pid_t ppid = 0;      ///< field 4
  pid_t pgrp = 0;      ///< field 5: process group
  pid_t session = 0;   ///< field 6
  /// Fields 14-17, in clock ticks (sysconf(_SC_CLK_TCK)): CPU time of the process (all its
  /// threads, exited ones included) and of its waited-for children.
  uint64_t utime = 0, stime = 0, cutime = 0, cstime = 0;
  /// Field 22: when the process started, in clock ticks since boot. Set by the kernel at fork and
  /// never changed: a process cannot descend from one that started after it.
  uint64_t start_time = 0;
};

/// Parses one /proc/<pid>/stat line (`len` bytes, no terminator needed). False when it is not one
/// (no parenthesised comm, fewer than 22 fields, a field that is not a number).
bool parse_proc_stat(const char* text, size_t len, proc_stat* out);

/// Reads /proc/<pid>/stat; false when the process is gone (or was never there).
bool read_proc_stat(pid_t pid, proc_stat* out);

/// read_proc_stat for normal (not signal-handler) code.
std::optional<proc_stat> proc_stat_of(pid_t pid);

/// Clock ticks (the unit of utime .. start_time) in nanoseconds. Not async-signal-safe.
uint64_t proc_ticks_ns(uint64_t ticks);

}  // namespace magpie
