// Slurm commands (sbatch, squeue, sacct, scancel) run as argv, never through a shell. The
// command runner is injectable so the state logic is tested on recorded output.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/subprocess.h"
#include "sched/slurm_parse.h"

namespace magpie::sched {

/// Runs one command to completion (argv[0] looked up on PATH).
using command_runner = std::function<status_or<run_result>(const std::vector<std::string>& argv)>;
/// The real runner: run_command with a `timeout_s` wall-clock limit.
command_runner default_runner(double timeout_s = 60);

class slurm_client {
 public:
  explicit slurm_client(command_runner run = default_runner());

  /// `sbatch --parsable <args...> <script>` → the job id. Errors carry sbatch's message.
  status_or<std::string> submit(const fs::path& script, const std::vector<std::string>& args);
  /// Current state of each id. squeue (--states=all) is authoritative while the controller
  /// knows the job (sacct lags behind it); sacct fills in exit codes and jobs squeue has
  /// forgotten (MinJobAge). Ids neither knows map to state unknown. An error only when squeue
  /// itself could not be run or reached the controller.
  status_or<std::map<std::string, job_info>> query(const std::vector<std::string>& ids);
  /// scancel <ids...>; an already finished job is not an error.
  status cancel(const std::vector<std::string>& ids);
  /// False once sacct said accounting is disabled (then only squeue is asked).
  bool accounting_available() const { return m_accounting != 0; }

 private:
  command_runner m_run;
  int m_accounting = -1;  ///< -1 unknown, 0 disabled, 1 works
};

/// Ok when sbatch, squeue and scancel are on PATH; the error names what is missing.
status check_slurm_tools();

/// Combines squeue's and sacct's view of one job (either may be absent: state unknown).
job_info merge_job_views(const job_info* squeue_view, const job_info* sacct_view, const std::string& id);

}  // namespace magpie::sched
