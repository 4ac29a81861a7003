// Reading a run workspace into store records: which mode it is, its metrics (with the
// direction that is better), per-request samples when the workspace has them, and the
// configuration hash that groups repeated runs (replicates).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/json.h"
#include "store/run_kind_codec.h"
#include "core/status.h"

namespace magpie::store {

struct metric {
  std::string name;       ///< "throughput.output_throughput", "k1.kernel_time_median_us"
  double value = 0;
  std::string unit;       ///< "tok/s", "ms", "us", "req/s", "count", ""
  std::string direction;  ///< "higher" | "lower" | "none" (which way is better)
  json extra = json::object();  ///< within-run spread when known: n, p25, p75, rel_stdev
};

struct run_record {
  fs::path workspace;      ///< absolute
  run_kind mode = run_kind::analyze;  ///< its words: store/run_kind_codec.h
  std::string name;        ///< "vllm/meta-llama/…" or the kernel ids
  std::string timestamp;   ///< report timestamp or directory mtime (YYYYmmdd_HHMMSS)
  std::string config_hash; ///< 16 hex digits over the volatile-free configuration
  bool success = false;
  /// "complete", or "interrupted" when the workspace has an INCOMPLETE marker (core/workspace.h)
  std::string state = "complete";
  std::string state_reason;  ///< the marker's reason ("interrupted by SIGINT")
  fs::path report_path;      ///< empty for an interrupted run that wrote no report
  json summary = json::object();  ///< a few display fields (framework, model, kernels…)
  std::vector<metric> metrics;
  /// Per-request samples (ms) keyed by metric family ("latency.ttft", "latency.e2el", …).
  std::map<std::string, std::vector<double>> samples;
};

/// Reads `workspace` (must hold analyze_report.json, compare_report.json or
/// benchmark_report.json, unless it is marked INCOMPLETE: an interrupted run is recorded with
/// state "interrupted", success false, its mode from the directory name and no metrics).
/// Errors name the directory and the file.
status_or<run_record> read_workspace(const fs::path& workspace);

}  // namespace magpie::store
