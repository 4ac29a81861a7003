// The serving-benchmark configuration: Magpie's `benchmark:` YAML schema (research magpie.md
// §6.1) plus two magpie blocks, `client:` (load generator) and `server:` (launch details).
// CLI flags are applied on top by src/cli/benchmark_serve.cpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/json.h"
#include "core/status.h"

namespace magpie::serve {

/// How vLLM's torch profiler is switched on: --profiler-config.* flags (vLLM >= 0.15), the
/// VLLM_TORCH_PROFILER_DIR environment only, none (no profiling), or auto (a config's choice:
/// flags or env by the vLLM version).
enum class profiler_delivery { automatic, flags, env, none };

struct profiler_settings {
  bool torch_profiler = true;       ///< Magpie's dataclass default when a YAML omits it
  bool tracelens_enabled = false;   ///< profiler.tracelens.enabled (inference trace analysis)
  json tracelens = json::object();  ///< the profiler.tracelens block as given
  int64_t profile_prompts = 0;      ///< 0: profile the measured run; N: separate pass of N prompts
  double trace_wait_s = 300;        ///< wait for trace files after /stop_profile
  profiler_delivery vllm_profiler_args = profiler_delivery::automatic;  ///< auto | flags | env (never none)
  /// profiler.system_profiler: Nsight Systems (`nsys profile`) around a local server on NVIDIA
  /// when nsys is on PATH; otherwise the run goes on without it and says so.
  bool system_profiler = false;
  std::vector<std::string> system_profile_args;  ///< extra `nsys profile` arguments
};

/// Magpie's server_lifecycle: keep a local server between runs (research magpie.md §6.3).
struct lifecycle_settings {
  bool enabled = false;
  bool cleanup = false;             ///< stop the server (and remove its state files) after this run
  bool force_reuse = false;         ///< reuse a healthy server even if its settings differ
  std::string pid_dir;              ///< state files <pid_dir>/<framework>_<port>.{pid,json}; "" = ~/.cache/magpie/server
  double server_ready_timeout_s = 2700;
};

struct gpu_selection_settings {
  bool auto_select = true;
  double min_free_memory_gb = 8.0;
  int count = 0;                    ///< 0: TP
  std::vector<int> candidates;
};

/// Load-generator settings (magpie's `client:` block); -1 / "" = from Magpie's envs.
struct client_settings {
  std::string endpoint = "/v1/completions";
  std::string dataset_name = "random", dataset_path;
  int64_t num_prompts = -1, max_concurrency = -1;
  int64_t random_input_len = -1, random_output_len = -1;
  std::optional<double> random_range_ratio;  ///< set: vLLM's symmetric semantics
  int64_t vocab_size = 32000;
  double request_rate = 0;          ///< <= 0: inf
  double burstiness = 1.0;
  int num_warmups = 1;
  uint64_t seed = 0;
  bool ignore_eos = false, continuous_usage = true;
  std::vector<std::string> goodput;  ///< "ttft:MS" items
  std::vector<double> percentiles = {50, 90, 95, 99};
  /// Per-request limits (serve/limits.h): < 0 derived from the workload (default), 0 none.
  double request_timeout_s = -1;
  int64_t max_event_bytes = -1, max_response_bytes = -1;
  bool keep_generated_text = false;  ///< keep each response's text (serving_result.json generated_texts)
  std::string served_model_name;    ///< request "model" (default: the server's first /v1/models id)
  std::vector<std::string> headers; ///< "Name: value"
  // CLI-only (vLLM `bench serve` flags; not part of the YAML schema)
  bool vllm_defaults = false;       ///< vLLM's defaults for unset settings (--base-url runs; docs/serving.md)
  std::optional<double> temperature;  ///< unset: vLLM style sends none, Magpie style sends 0
  std::vector<std::string> percentile_metrics;  ///< metrics with vLLM stats keys; empty: all
  std::string label;                ///< vLLM's --label
  bool kernel_timestamps = true;    ///< --timestamps kernel|read
};

struct server_settings {
  int port = 0;                     ///< 0: envs.PORT, else a free port
  double ready_timeout_s = 1800;
  double stop_grace_s = 10;         ///< SIGTERM → SIGKILL delay when stopping the server group
  std::vector<std::string> extra_args;  ///< appended to the server command line
  std::vector<std::string> command;     ///< replaces the whole server command (argv) when set
};

/// The serving frameworks magpie launches (benchmark.framework, `magpie benchmark <framework>`).
enum class serving_framework { vllm, sglang, atom };
/// Where the server runs: in a container, as a local process, or (ray) the whole run is
/// submitted as one Ray job by cli/benchmark_ray.cpp, which runs it there with run_mode local.
enum class server_run_mode { docker, local, ray };
/// upstream Magpie's run_kind: measurement (no profilers allowed), diagnostic, or auto
/// (diagnostic when any profiler or analysis is on).
enum class run_kind { automatic, measurement, diagnostic };

/// The words of reports, configs and flags (bench_modes_codec.cpp): "vllm" "sglang" "atom";
/// "docker" "local" "ray"; "auto" "measurement" "diagnostic"; "auto" "flags" "env" "none". Parsers
/// take the exact word.
const char* serving_framework_name(serving_framework f);
std::optional<serving_framework> parse_serving_framework(std::string_view word);
const char* server_run_mode_name(server_run_mode m);
std::optional<server_run_mode> parse_server_run_mode(std::string_view word);
const char* run_kind_name(run_kind k);
std::optional<run_kind> parse_run_kind(std::string_view word);
const char* profiler_delivery_name(profiler_delivery d);
std::optional<profiler_delivery> parse_profiler_delivery(std::string_view word);
inline void to_json(json& j, serving_framework f) { j = serving_framework_name(f); }
inline void to_json(json& j, server_run_mode m) { j = server_run_mode_name(m); }
inline void to_json(json& j, run_kind k) { j = run_kind_name(k); }
inline void to_json(json& j, profiler_delivery d) { j = profiler_delivery_name(d); }
/// A framework named on the command line; an unknown word is an error listing the supported ones.
status_or<serving_framework> framework_from_word(const std::string& word);

struct benchmark_config {
  std::optional<serving_framework> framework;  ///< nullopt: none (a --base-url run without one)
  std::string model, precision = "fp8";
  server_run_mode run_mode = server_run_mode::docker;
  serve::run_kind run_kind = serve::run_kind::automatic;
  env_list envs;                    ///< keys upper-cased, file order
  profiler_settings profiler;
  json gap_analysis = json::object();  ///< the gap_analysis block as given (trace::decode_gap_config)
  bool gap_analysis_enabled = false;
  gpu_selection_settings gpu_selection;
  std::string docker_image, gpu_arch, hf_cache_path = "~/.cache/huggingface", model_revision;
  double timeout_seconds = 3600;
  client_settings client;
  server_settings server;
  lifecycle_settings lifecycle;
  std::string base_url;             ///< benchmark a running server (BENCHMARK_BASE_URL env too)
  // provenance
  std::string config_path, input_config_sha256;
  std::vector<std::string> warnings;  ///< accepted Magpie keys magpie ignores, and similar

  std::string env(const std::string& key, const std::string& dflt = {}) const;
  int64_t env_int(const std::string& key, int64_t dflt) const;
  double env_double(const std::string& key, double dflt) const;
  void set_env(const std::string& key, const std::string& value);
  int tp() const { return static_cast<int>(env_int("TP", 1)); }
  /// Magpie's run_kind policy: auto → diagnostic when any profiler/analysis is on.
  bool profiling_requested() const;
  serve::run_kind effective_run_kind() const;
  /// The framework's word; "" when none.
  std::string framework_name() const;
};

/// Magpie's defaults for the envs when none are given: TP 1, CONC 32, ISL 1024, OSL 512,
/// RANDOM_RANGE_RATIO 0.5.
env_list default_envs();

/// Parses a YAML document with a top-level `benchmark:` mapping; errors name file:line and field.
status_or<benchmark_config> parse_benchmark_yaml(const std::string& text, const std::string& file_name);
status_or<benchmark_config> load_benchmark_config(const fs::path& path);

/// Checks the finished config (after CLI overrides): known framework and run mode, a model
/// unless --base-url (which must parse), run_kind vs profiling, every known env value
/// (check_env_value), client sizes, server_lifecycle constraints.
status validate_config(const benchmark_config& c);

/// "" when `value` is acceptable for the env `key` (TP, CONC, ISL, OSL, NUM_PROMPTS, PORT,
/// MAX_MODEL_LEN: integers in range; RANDOM_RANGE_RATIO in [0, 1]; GPU_MEM_UTIL /
/// GPU_MEMORY_UTILIZATION in (0, 1]); else what is expected. Unknown keys pass.
std::string check_env_value(const std::string& key, const std::string& value);

/// The GPU memory fraction from GPU_MEMORY_UTILIZATION or GPU_MEM_UTIL ("" when neither).
std::string gpu_memory_utilization(const benchmark_config& c);

}  // namespace magpie::serve
