// Scoped capture of SIGINT / SIGTERM / SIGHUP for long waits that must end cleanly (stop a
// server group, cancel jobs, write partial reports) instead of dying: while an instance lives,
// these signals are only recorded; the previous handlers are restored when it is destroyed.
// The recorded state is process-wide, so one instance at a time.
#pragma once

#include <signal.h>

namespace magpie {

class signal_capture {
 public:
  signal_capture();  ///< clears the recorded state, then installs the handlers
  ~signal_capture();
  signal_capture(const signal_capture&) = delete;
  signal_capture& operator=(const signal_capture&) = delete;

  /// The last signal received while captured; 0 when none.
  static int last_signal();
  /// How many signals were received while captured.
  static int count();

 private:
  struct sigaction m_old[3];
};

}  // namespace magpie
