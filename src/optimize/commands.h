// The commands a loop runs (magpie subcommands as children of this binary) and the steps it
// does in-process, each recorded for the report's `commands[]` with its log files under
// <workspace>/logs/. A recorded SIGINT/SIGTERM (signal_capture) stops a running child's
// process group at once.
#pragma once

#include <string>
#include <vector>

#include <optional>
#include <utility>

#include "core/env.h"
#include "core/fs.h"
#include "core/status.h"

namespace magpie::optimize {

struct command_result {
  int rc = -1;           ///< exit code; 124 timed out, 128+N killed by signal N, 130 interrupted
  std::string out, err;  ///< captured output (also in the log files)
  double seconds = 0;
};

/// One entry of the report's `commands[]`: a child run (argv, cwd, env, logs) or an in-process
/// step with its equivalent CLI (in_process; stdout names its log when it has one).
struct command_record {
  std::string name;
  bool in_process = false;
  std::vector<std::string> argv;
  std::optional<std::string> cwd;                          ///< children only; nullopt: ours
  std::vector<std::pair<std::string, std::string>> env;    ///< children only: set on top of ours
  int rc = 0;
  double seconds = 0;
  std::optional<std::string> stdout_log, stderr_log;       ///< relative to the workspace
};

class command_runner {
 public:
  explicit command_runner(fs::path workspace);

  /// Runs argv (cwd "" = ours) with `env` on top of ours; spawn failures are rc 127.
  command_result run(const std::string& name, const std::vector<std::string>& argv, const fs::path& cwd,
                     const env_list& env, double timeout_s);
  /// Records an in-process step (benchmark client, results store) with the equivalent CLI.
  void record(const std::string& name, const std::vector<std::string>& equivalent, double seconds, int rc,
              const std::string& log_file = {});
  const std::vector<command_record>& commands() const { return m_commands; }
  /// Commands of an earlier run (resume), kept in front of this run's.
  void prepend(const std::vector<command_record>& earlier);
  fs::path logs_dir() const { return m_logs; }

 private:
  fs::path m_workspace, m_logs;
  std::vector<command_record> m_commands;
};

/// "interrupted by signal N (name)" when SIGINT/SIGTERM/SIGHUP was recorded, else "".
std::string interrupted();

/// The last `max_bytes` of stderr then stdout of a result, for error messages.
std::string tail_of(const command_result& r, size_t max_bytes = 1500);

}  // namespace magpie::optimize
