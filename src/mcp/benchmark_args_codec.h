// The benchmark tool's arguments (upstream Magpie's names) as one typed struct, decoded once per
// call (also each benchmark_batch config), with its input schema and the printer of the
// `benchmark:` YAML document the tool hands to `magpie benchmark`.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json.h"
#include "core/status.h"
#include "serve/bench_config.h"

namespace magpie::mcp {

/// The `ray_*` arguments (run_mode ray: the YAML's ray_config; docs/ray.md). Empty / 0 / false
/// is "not given" (upstream clients send every parameter with its default).
struct benchmark_ray_args {
  std::string cluster_address, shared_storage_path;
  double num_gpus = 0;
  bool multi_node = false;
  int64_t total_num_gpus = 0, num_nodes = 0;
};

struct benchmark_args {
  serve::serving_framework framework = serve::serving_framework::vllm;
  std::string model;
  std::string precision = "fp8";
  serve::server_run_mode run_mode = serve::server_run_mode::docker;
  int tp = 1, concurrency = 32, input_len = 1024, output_len = 512;
  bool torch_profiler = true;  ///< upstream Magpie's MCP default: on
  // AgentX capture settings: accepted, passed into the YAML, not used (nullopt: not given).
  std::optional<int64_t> torch_profiler_steps, torch_profiler_count;
  std::optional<double> torch_profiler_interval_seconds, torch_profiler_start_seconds;
  std::optional<bool> torch_profiler_detailed_annotations;
  bool system_profiler = false;
  std::optional<bool> tracelens;  ///< nullopt: no tracelens block in the YAML
  std::string tracelens_export_format = "csv";
  bool gap_analysis_enabled = false;
  int gap_analysis_top_k = 20;
  double gap_analysis_start_pct = 0, gap_analysis_end_pct = 100, gap_analysis_min_duration_us = 0;
  std::optional<std::vector<std::string>> gap_analysis_categories, gap_analysis_ignore_categories;
  // Passed into the YAML when not empty.
  std::string docker_image, gpu_arch, hf_cache_path, inferencex_path, benchmark_script, runner_type;
  double timeout_seconds = 3600;
  std::string output_dir;  ///< "" = the server's default
  /// Environment variables in the given order (names upper-cased by the printer, as upstream).
  std::vector<std::pair<std::string, json>> extra_envs;
  json benchmark_config = json::object();  ///< extra keys merged into the `benchmark:` YAML as given
  std::vector<std::string> extra_args;     ///< appended to the `magpie benchmark` command line
  benchmark_ray_args ray;
  bool agentx = false;
  std::string agentx_mode;
};

/// The benchmark tool's input schema (closed: every argument above).
const json& benchmark_args_schema();

/// Decodes the tool's arguments once. An argument the schema does not know, or one of the wrong
/// type, is an error naming it ("benchmark arguments: field 'tp': expected an integer, got string").
status_or<benchmark_args> decode_benchmark_args(const json& arguments);

/// The `{benchmark: {...}}` document for `magpie benchmark --benchmark-config` (research
/// magpie.md §6.1, §10 tool 8). Arguments accepted but not acted on are appended to `warnings`.
json benchmark_yaml(const benchmark_args& a, std::vector<std::string>* warnings);

}  // namespace magpie::mcp
