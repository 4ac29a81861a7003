// benchmark_report.json (upstream Magpie's keys, research magpie.md §6.9, plus ours) and
// summary.txt: the orchestrator's benchmark_run becomes a typed benchmark_report
// (make_benchmark_report: every decision of the report made once), which the printers of
// serve/report_printer.h write.
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

/// The report's "serving" block: the measured run's requested and achieved load, goodput,
/// token accounting and client-side observations.
struct serving_block {
  std::string served_model;         ///< the model name the requests sent
  double request_rate = 0;          ///< requested, req/s; <= 0: "inf" (all at once)
  double burstiness = 1;
  json max_concurrency = nullptr;   ///< as in the vLLM result (null: no limit)
  json goodput_slo_ms = nullptr;    ///< the vLLM result's goodput_config
  size_t num_prompts = 0;           ///< measured requests
  serving_metrics metrics;
  load_stats load;
  size_t warmup_requests = 0;
  std::string aborted;              ///< why the run stopped early; "" (null) if it did not
  std::string first_error;          ///< the first failed measured request's error ("" none; not in the JSON)
};

/// The report's "profile_pass" block (a separate profiled pass after the measured one).
struct profile_pass_block {
  size_t requests = 0;
  serving_metrics metrics;
};

/// The report's "provenance" block.
struct report_provenance {
  std::string input_config_sha256, config_path;  ///< "" → null
  std::vector<std::string> magpie_command;
  std::string model, model_revision;             ///< model_revision "" → null
  std::string framework;                         ///< framework_name(): "" without one
  std::string precision;
  std::optional<server_run_mode> run_mode;       ///< nullopt: "external" (a --base-url run)
  json image = nullptr;                          ///< the server plan's image
  std::vector<std::pair<std::string, std::string>> envs;  ///< file order; secrets already "<redacted>"
  json gpu_assignment = nullptr;
  std::string host, started_at;
  benchmark_config effective_config;
};

/// benchmark_report.json as data.
struct benchmark_report {
  bool success = false;
  std::string framework;            ///< framework_name(): "" without one
  std::string model;                ///< the configured model, else the served one
  std::optional<serving_metrics> metrics;  ///< throughput / latency of the measured run (null without one)
  json kernel_summary = json::array();     ///< trace_blocks' [{name, time_ms, percent, calls}]
  json top_bottlenecks = json::array();
  std::optional<trace::inference_result> tracelens_analysis;
  std::optional<trace::gap_outputs> gap_analysis;
  fs::path workspace;
  double execution_time_s = 0;
  bool profiling_enabled = false;
  serve::run_kind run_kind = serve::run_kind::automatic;  ///< the effective run kind
  bool reward_eligible = false;     ///< a successful measurement run
  /// The run's, then the trace post-processing's; summary.txt lists only the first
  /// `own_warnings` warnings (the run's own).
  std::vector<std::string> errors, warnings;
  size_t own_warnings = 0;
  std::optional<serving_block> serving;
  std::optional<profile_pass_block> profile_pass;
  json server = nullptr;            ///< plan, ready time, exit
  report_provenance provenance;
  std::map<std::string, std::string> files;  ///< role → path relative to the workspace
};

/// The report of a run (no I/O but the host name).
benchmark_report make_benchmark_report(const benchmark_run& run);
/// Writes benchmark_report.json and summary.txt (serve/report_printer.h) atomically into the
/// report's workspace.
status write_reports(const benchmark_report& report);

}  // namespace magpie::serve
