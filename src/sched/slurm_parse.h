// Parsers for the output of sbatch --parsable, squeue -O (our column list, '|' separated) and
// sacct --parsable2 (header line, '|' separated). Pure functions, unit-tested on recorded output.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/status.h"
#include "sched/job_state.h"

namespace magpie::sched {

/// What squeue or sacct says about one job.
struct job_info {
  std::string job_id;
  std::string name;
  job_state state = job_state::unknown;
  std::string state_text;   ///< as printed, e.g. "CANCELLED by 0"
  std::string reason;       ///< "Dependency", "TimeLimit", "NonZeroExitCode" ("" for None)
  std::string nodes;        ///< node list ("" while pending)
  int exit_status = -1;     ///< exit code of the batch script (-1: unknown)
  int exit_signal = 0;      ///< signal that ended the batch script (0: none or unknown)
  double elapsed_s = -1;    ///< run time in seconds (-1: unknown)
  std::string start, end;   ///< Slurm's local ISO times ("" unknown)
  std::string time_limit;   ///< as printed ("1:00", "00:01:00", "UNLIMITED")
  std::string source;       ///< "squeue" | "sacct"
};

/// Rows of delimited text whose first non-empty line is a header; keys are the upper-cased
/// header names. A trailing separator on each line (squeue -O "x:|") is ignored.
std::vector<std::map<std::string, std::string>> parse_table(std::string_view text, char sep);

/// The job id of `sbatch --parsable` output ("1234" or "1234;cluster").
status_or<std::string> parse_sbatch_parsable(std::string_view out);

/// squeue --states=all -O k_squeue_columns output.
std::vector<job_info> parse_squeue(std::string_view text);
/// sacct --parsable2 -X --format=k_sacct_columns output (job steps "123.batch" are skipped).
std::vector<job_info> parse_sacct(std::string_view text);

/// "[D-]HH:MM:SS[.fff]", "MM:SS", "M" → seconds; "UNLIMITED"/"INFINITE" → +inf;
/// anything else (empty, "INVALID", "Partition_Limit") → -1.
double parse_slurm_duration(std::string_view s);
/// True for sbatch --time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, "UNLIMITED".
bool valid_time_limit(std::string_view s);

/// squeue -O column list (suffix '|' on every column).
extern const char* const k_squeue_columns;
/// sacct --format column list.
extern const char* const k_sacct_columns;

}  // namespace magpie::sched
