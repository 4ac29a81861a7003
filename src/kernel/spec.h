// What to evaluate: kernel entries (upstream Magpie's kernel YAML, plus our additions) and the named
// policy objects that govern correctness, timing and comparison.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/json.h"
#include "core/states.h"

namespace magpie::kernel {

enum class kernel_type { hip, cuda, pytorch, triton, host };

/// Upstream Magpie's parser: hip, cuda, pytorch|torch|py, triton (case-insensitive), plus host.
bool parse_kernel_type(const std::string& s, kernel_type* out);
/// Upper-case enum name used in reports ("HIP", "CUDA", "PYTORCH", "TRITON", "HOST").
const char* kernel_type_name(kernel_type t);
/// True for types whose work runs on an NVIDIA GPU when one is present (CUPTI applies).
bool uses_cuda(kernel_type t);
bool is_python(kernel_type t);

/// Upstream Magpie's bench_target: {module, callable, get_inputs}.
struct bench_target {
  std::string module, callable, get_inputs;
};

struct kernel_spec {
  std::string id = "kernel";
  kernel_type type = kernel_type::hip;
  std::vector<std::string> source_files;  ///< absolute after resolve_paths()
  fs::path working_dir;                   ///< absolute; upstream Magpie's rules (kernel/spec_paths.h)
  env_list env;                           ///< PATH-like keys prepended
  argv_list compile_command, testcase_command, prof_command;
  std::optional<bench_target> target;
  std::string get_inputs_func = "get_inputs", get_init_inputs_func = "get_init_inputs";
  std::string entry;        ///< python class/callable (ours)
  std::string inputs_from;  ///< python file with get_inputs (ours), absolute when set
  std::string origin;       ///< "file.yaml:12:5" or "cli" (for messages)
  /// YAML `expect: incorrect` (ours): wrong on purpose, e.g. an example of the correctness gate.
  /// Its rejection is reported as expected and does not make the run a failure.
  bool expect_incorrect = false;
};

/// How correctness is decided (the policy; what a kernel's check ended up being is its
/// correctness_basis, core/states.h).
enum class correctness_method { auto_select, outputs, exit_code };
/// "auto", "outputs", "exit_code".
const char* correctness_method_name(correctness_method m);
/// Also upstream Magpie's "testcase" (= exit_code).
std::optional<correctness_method> parse_correctness_method(std::string_view word);

struct tolerance {
  double atol = 0, rtol = 0;
};

struct correctness_policy {
  correctness_method method = correctness_method::auto_select;
  int trials = 5;                 ///< fresh seeded trials (≥ the harness's sizes is advised)
  std::optional<uint64_t> seed;   ///< run seed; unset = fresh from /dev/urandom each run
  tolerance fp32{1e-4, 1e-4}, fp16{1e-2, 1e-2}, bf16{1e-2, 1e-2}, fp64{1e-7, 1e-7};
  bool check_degenerate = true;   ///< all-zero / constant / equal-to-input outputs
  bool check_mutation = true;     ///< inputs changed by the candidate
  double timeout_s = 300;         ///< per correctness run
};

/// nvbench-style measurement policy; times are seconds.
struct timing_policy {
  int warmup = 10;             ///< untimed launches before sampling
  int min_samples = 10;
  double max_noise = 0.005;    ///< stop when stdev/mean of samples falls below this
  double min_time_s = 0.5;     ///< accumulated measured time before noise may stop sampling
  double max_time_s = 15;      ///< wall-clock budget for sampling
  bool cold = true;            ///< flush L2 / LLC before each sample (outside the timed region)
  int batch = 1;               ///< launches per sample
  int64_t max_samples = 1000000;
  double sample_timeout_s = 60;  ///< one sample's answer
  double setup_timeout_s = 300;  ///< harness start-up until "ready" (includes JIT)
  uint64_t flush_bytes = 0;      ///< 0 = auto (≥ 2× L2)
  int processes = 2;             ///< harness processes per implementation at first (the pilot)
  int max_processes = 16;        ///< a compare adds processes up to this when the pilot's spread asks for it
  bool auto_batch = true;        ///< warm runs of kernels under 10 µs: batch chosen from the pilot (batch 1 only)
  int checked_samples = 6;       ///< timed samples per process whose outputs are read and compared (first, last, random)
};

struct compare_policy {
  double same_tolerance = 0.02;  ///< |speedup − 1| within this (whole CI) → "same"
  double confidence = 0.95;
  int bootstrap_resamples = 2000;
  std::string winner_strategy = "speedup";  ///< upstream Magpie's perf_score maps here
};

/// performance.backend / --profiler: auto (ncu for CUDA when present), or one backend.
enum class profiler_backend { auto_select, ncu, rocprof_compute, metrix, cupti, none };
const char* profiler_backend_name(profiler_backend b);
std::optional<profiler_backend> parse_profiler_backend(std::string_view word);

struct perf_policy {
  bool enabled = true;          ///< --no-perf disables
  profiler_backend backend = profiler_backend::auto_select;
  double timeout_s = 600;       ///< upstream Magpie's performance.timeout_seconds
  std::vector<std::string> ncu_args;
  std::vector<std::string> ncu_metrics;
};

/// A reference evaluated in another job of a scale-out batch: the one gate every candidate of
/// the batch is compared against (same run seed, same manifest).
struct external_reference {
  std::string id;
  fs::path manifest_dir;           ///< holds manifest.json; empty when the reference wrote none
  correctness_basis basis = correctness_basis::reference;  ///< the reference's: reference or exit_code
  std::string failure;             ///< non-empty: the reference failed; candidates fail as they do locally
  json report = nullptr;           ///< the reference's kernel_eval_json, copied into reports
};

/// What a run does: analyze kernels, compare them, or (a scale-out job) evaluate only the
/// reference. Its word names the workspace (<mode>_<ts>/) and the report's "mode".
enum class run_mode { analyze, compare, reference };
/// "analyze", "compare", "reference".
const char* run_mode_name(run_mode m);
std::optional<run_mode> parse_run_mode(std::string_view word);
inline void to_json(json& j, run_mode m) { j = run_mode_name(m); }

/// One run's full request.
struct eval_request {
  run_mode mode = run_mode::analyze;
  std::vector<kernel_spec> kernels;
  std::optional<kernel_spec> reference;
  int baseline_index = 0;
  correctness_policy correctness;
  timing_policy timing;
  compare_policy compare;
  perf_policy performance;
  bool enable_default_compile = false;  ///< upstream Magpie's compiling.enable_default_compile
  fs::path output_dir = "./results";
  std::string config_file;        ///< source YAML (for provenance), may be empty
  json raw_config;                ///< the YAML as JSON (config.yaml snapshot)
  /// Set by scale-out jobs: compare against this reference instead of evaluating one.
  std::optional<external_reference> external_ref;
  /// A local compare's workers (kernel/workers.h), from upstream Magpie's scheduler.max_workers /
  /// gpu_devices or -w, copied here by the CLI: at most this many candidates at once (0 = 1),
  /// bound to these GPUs ({} = discover them).
  int max_workers = 0;
  std::vector<int64_t> gpu_devices;
};

/// Parses an upstream Magpie kernel YAML (with our additions) into `req` (kernels, reference, policies).
/// Errors name file:line:col and field. Its `scheduler:` and `ray_config:` sections are where
/// runs execute, read by sched::load_scheduler_sections; they are accepted here unread.
status load_kernel_config(const fs::path& path, eval_request* req);

}  // namespace magpie::kernel
