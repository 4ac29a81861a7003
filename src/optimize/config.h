// `magpie optimize` configuration (optimize.yaml, docs/optimization-loop.md): the workload,
// how to start the server for a kernel choice, the source trees, the candidates per op, the
// gap window, the end-to-end measurement design and the decision thresholds. Relative paths
// are relative to the config file. Every error names file:line and the dotted field.
#pragma once

#include <string>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/status.h"
#include "serve/bench_config.h"

namespace magpie::optimize {

/// One op the loop may optimize: its compare YAML, the baseline's id in it, the baseline's
/// kernel symbols (trace names) and, per candidate id of the YAML, the server variant value.
struct op_config {
  std::string name;
  fs::path compare_yaml;
  std::string baseline_id;
  std::vector<std::string> kernels;
  std::vector<std::pair<std::string, std::string>> candidates;  ///< compare id → implementation
};

struct workload_config {
  serve::benchmark_config bench;  ///< client settings (and envs) of every measured run
  int64_t num_prompts = 0;        ///< per measured run; 0 = calibrate
  double target_s = 15;           ///< calibration: seconds one measured run should last
  int64_t calibration_prompts = 0;  ///< probe size; 0 = 3 × concurrency
  int64_t warmup_prompts = -1;    ///< discarded pass after each server start; -1 = 3 × concurrency
  int64_t profile_prompts = 64;   ///< the profiled (diagnostic) run
  int64_t initial_runs = 1;       ///< baseline_benchmarks: measured runs before the analysis
  double timeout_s = 600;         ///< per benchmark run
  int64_t concurrency() const;
};

struct server_config {
  std::vector<std::string> command;  ///< placeholders {variant} {port} {trace_dir} {config_dir} {python} {out}
  env_list env;                      ///< the same placeholders
  std::string baseline = "baseline"; ///< the baseline's variant value
  std::string variant = "{baseline},{op}={impl}";  ///< a candidate's variant value
  double ready_timeout_s = 420, stop_grace_s = 10;
  std::string info_path;             ///< GET after readiness (JSON kept in the report); "" = none
  std::vector<std::string> identity_keys;  ///< info keys that must be equal for every server
  std::string variant_check;         ///< info.<variant_check>.<op> must equal the implementation
};

struct gap_window {
  double start_pct = 20, end_pct = 80;
  int64_t top_k = 25;
};

struct e2e_config {
  std::string order = "abba";       ///< abba | abab: side order of successive pairs
  std::string servers = "restart";  ///< restart: a fresh (warmed) server per run; concurrent: one per side, both up
  int64_t pairs = 3, max_pairs = 3; ///< runs per side: at least pairs, at most max_pairs
  double target_mde_pct = 0;        ///< add pairs until the smallest detectable change ≤ this (0: off)
  double power = 0.8;               ///< for the smallest detectable change
  double max_series_s = 0;          ///< a pair beyond `pairs` starts only while the series' seconds so far
                                    ///< plus its longest pair fit in this (0: no limit)
  std::string control = "none";     ///< none | aa (the candidate server runs the baseline variant)
};

struct decision_config {
  double alpha = 0.05;
  double min_confidence = 0.9;
  std::vector<std::string> metrics = {"output_throughput"};  ///< all must improve beyond noise
};

struct optimize_config {
  fs::path path, dir;  ///< the config file and its directory
  std::string name = "optimize";
  workload_config workload;
  server_config server;
  std::vector<fs::path> source_repos;
  gap_window gap;
  double compare_max_time_s = 6;
  env_list compare_env;              ///< placeholders {concurrency}
  std::vector<op_config> ops;
  e2e_config e2e;
  decision_config decision;

  const op_config* find_op(const std::string& name) const;
  /// op of a trace kernel name ("" when none): exact symbol, or a Triton specialisation suffix.
  std::string op_of_kernel(const std::string& kernel_name, std::string* symbol = nullptr) const;
};

status_or<optimize_config> parse_optimize_yaml(const std::string& text, const fs::path& file);
status_or<optimize_config> load_optimize_config(const fs::path& path);

/// Replaces {key} placeholders from `vars`; unknown ones are an error naming them.
status_or<std::string> expand_placeholders(const std::string& s, const std::vector<std::pair<std::string, std::string>>& vars);

}  // namespace magpie::optimize
