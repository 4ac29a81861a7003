// Subprocesses: argv only (never a shell), own session/process group, captured output,
// wall-clock timeout with whole-group kill (SIGTERM, then SIGKILL after a grace period).
// Optionally a control channel: the child reads commands on fd 3 and answers on fd 4.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/fs.h"
#include "core/sandbox.h"
#include "core/status.h"

namespace magpie {

struct spawn_spec {
  std::vector<std::string> argv;  ///< argv[0] is resolved on the *merged* PATH
  fs::path cwd;                   ///< empty: inherit ours
  env_list env;                   ///< applied to our environment with merge_env()
  std::vector<std::string> unset_env;
  bool control_channel = false;   ///< child fd 3 = commands in, fd 4 = replies out
  /// Our fds handed to the child: extra_fds[i] becomes child fd (control_channel ? 5 : 3) + i.
  std::vector<int> extra_fds;
  std::string stdin_data;         ///< written then closed; empty: stdin is /dev/null
  bool forward_output = false;    ///< also copy the child's stdout/stderr to our stderr live
  size_t capture_limit = 16u << 20;  ///< bytes kept per stream; the rest is counted, dropped
  /// Called with each chunk of stdout / stderr as it arrives (may be empty functions).
  std::function<void(std::string_view)> on_stdout, on_stderr;
  double kill_grace_s = 2.0;      ///< SIGTERM → SIGKILL delay
  /// Code under test: run it inside the candidate sandbox (core/sandbox.h) when one can be made
  /// here; child_process::sandbox_status says whether it was.
  sandbox_spec sandbox;
};

struct run_result {
  int exit_code = -1;      ///< valid when the child exited normally
  int term_signal = 0;     ///< > 0 when it was killed by a signal
  bool timed_out = false;  ///< we killed it at the deadline
  std::string out, err;    ///< captured (possibly truncated) stdout / stderr
  size_t out_dropped = 0, err_dropped = 0;
  double wall_seconds = 0;
  bool success() const { return !timed_out && term_signal == 0 && exit_code == 0; }
  /// "exit code 2", "killed by signal 11 (Segmentation fault)", "timed out after 5.0 s".
  std::string describe() const;
  /// The last `max_bytes` of stderr, else stdout (for error messages).
  std::string output_tail(size_t max_bytes = 2000) const;  ///< printable_text (core/utf8.h)
};

/// A running child. Destruction kills its process group if it is still alive.
class child_process {
 public:
  static status_or<std::unique_ptr<child_process>> spawn(const spawn_spec& spec);
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  pid_t pid() const { return m_pid; }
  bool running() const { return !m_exited; }

  /// Pumps output until one full line arrives on the control channel (returned without
  /// '\n'). Errors: timeout (child killed? no: caller decides), unavailable when the
  /// child exited or closed the channel first.
  status_or<std::string> read_control_line(double timeout_s);
  status write_control(const std::string& line);
  /// Arms (on) or disarms a SIGSTOP that the kernel itself sends when the child writes on its
  /// control channel (O_ASYNC + F_SETSIG on our end): to the child's process group, and to each
  /// thread of `tids` directly (one open file description of the pipe per thread, F_OWNER_TID).
  /// A process-directed stop waits until one of its threads runs; a thread-directed one stops
  /// the writing thread in its write and interrupts the running ones at once.
  status stop_group_on_reply(bool on, const std::vector<pid_t>& tids = {});

  /// Pumps output (capture, callbacks, forwarding) for up to max_wait_s without killing
  /// anything, for callers that supervise a long-running child; returns running().
  bool poll_output(double max_wait_s);
  /// Seconds since spawn (monotonic clock).
  double age_seconds() const;
  /// Waits for exit, pumping output; ends the tree at the deadline, timeout_s after spawn, not
  /// after this call (timeout_s <= 0: none). After
  /// the exit, members of its tree still running (setsid descendants included) are ended too.
  run_result wait(double timeout_s);
  /// Ends the child's whole process tree (core/process_tree.h: every descendant and its process
  /// group, re-parented orphans carrying its tag included): SIGTERM, SIGKILL after the grace
  /// period; reaps the child.
  void kill_group();
  /// The child's MAGPIE_PROCESS_TREE tag (its descendants carry it in their environment).
  const std::string& tree_tag() const { return m_tag; }
  /// Whether spec.sandbox was asked for and made: false with why_unsandboxed() set when it was
  /// asked for but could not be (or was disabled).
  bool sandboxed() const { return m_spec.sandbox.enabled && m_sandbox_off.empty(); }
  const std::string& why_unsandboxed() const { return m_sandbox_off; }

 private:
  child_process() = default;
  /// One poll round (≤ max_wait_ms). Returns false when nothing more can happen.
  bool pump(int max_wait_ms);
  void on_exit_status(int wstatus);
  void drain_after_exit();
  void close_fds();

  spawn_spec m_spec;
  pid_t m_pid = -1;
  std::string m_tag;
  std::string m_sandbox_off;
  int m_pidfd = -1;
  int m_out_fd = -1, m_err_fd = -1, m_in_fd = -1;
  int m_ctrl_w = -1, m_ctrl_r = -1;
  std::vector<int> m_stop_fds;  ///< stop_group_on_reply's per-thread descriptors of the control pipe
  size_t m_stdin_off = 0;
  std::string m_ctrl_buf;
  bool m_exited = false;
  double m_start = 0;
  run_result m_result;
};

/// Spawns, waits and returns the result. Only spawn failures are a status (not_found for
/// an unknown program); non-zero exits, signals and timeouts are in the result.
status_or<run_result> run_command(const spawn_spec& spec, double timeout_s);

/// Monotonic seconds since an arbitrary epoch.
double monotonic_seconds();

/// Makes this process the subreaper of its descendants (core/process_tree.h) and installs
/// SIGINT/SIGTERM/SIGHUP handlers that, before this process dies with the same signal: mark the
/// workspaces of runs in progress INCOMPLETE and say so on stderr (core/workspace.h,
/// note_run_in_progress), end every descendant (SIGTERM, 0.5 s grace, SIGKILL; setsid ones too,
/// kept persistent servers excepted) and record the interrupted runs (the interrupt recorder).
/// Children run in their own sessions, so without this an interrupted magpie would leave them
/// running. A live signal_capture replaces these handlers while it lives.
void install_termination_handlers();

}  // namespace magpie
