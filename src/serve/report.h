// benchmark_report.json (Magpie's keys, research magpie.md §6.9, plus ours) and summary.txt.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/status.h"
#include "serve/bench_config.h"
#include "serve/client.h"
#include "serve/profiling.h"

namespace magpie::serve {

/// Everything a run produced, filled in stage by stage by the orchestrator.
struct benchmark_run {
  benchmark_config cfg;
  fs::path workspace;
  std::string started_at;          ///< ISO-8601 UTC
  double execution_time_s = 0;
  bool success = false;
  std::vector<std::string> errors, warnings;
  std::optional<client_result> client;   ///< the measured run
  std::optional<client_result> profile_pass;
  json server = nullptr;           ///< plan, ready time, exit
  json gpu_assignment = nullptr;
  std::string gpu_name;            ///< of the (first) GPU the server got, for rooflines
  trace_blocks traces;
  bool profiled = false;           ///< traces were requested and collected
  std::vector<std::string> magpie_argv;
  std::map<std::string, std::string> files;  ///< role → path relative to the workspace
};

json benchmark_report_json(const benchmark_run& run);
/// Magpie's get_summary() text (60 '=' lines, throughput, latency, bottlenecks, gap analysis,
/// errors, workspace, execution time).
std::string summary_text(const benchmark_run& run);
/// Writes benchmark_report.json and summary.txt atomically into the workspace.
status write_reports(const benchmark_run& run);

}  // namespace magpie::serve
