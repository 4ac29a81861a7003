// Where scale-out runs execute: Magpie's `scheduler:` and `ray_config:` sections (kernel YAML,
// framework config, a benchmark's `benchmark:` block) and the scheduler flags' values. The
// kernel module never sees these: sched plans jobs from them (batch.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/json.h"

namespace magpie::sched {

/// Where runs execute (scheduler.environment, -e/--environment): container is upstream Magpie's
/// stub environment, accepted by the parser and refused by check_environment.
enum class run_environment { local, container, ray, slurm };
/// "local", "container", "ray", "slurm" (batch_codec.cpp).
const char* run_environment_name(run_environment e);
/// Lower-case words only (callers lower-case YAML values, as upstream Magpie does).
std::optional<run_environment> parse_run_environment(std::string_view word);
inline void to_json(json& j, run_environment e) { j = run_environment_name(e); }

/// The system a batch's jobs run on (batch.json's "engine").
enum class engine_kind { slurm, ray };
/// "slurm", "ray" (batch_codec.cpp).
const char* engine_kind_name(engine_kind k);
std::optional<engine_kind> parse_engine_kind(std::string_view word);
inline void to_json(json& j, engine_kind k) { j = engine_kind_name(k); }

/// Magpie's `ray_config:` (kernel YAML top level, or inside a benchmark's `benchmark:` block):
/// where the Ray Jobs API is and what each job's entrypoint reserves (src/sched, docs/ray.md).
struct ray_options {
  std::string cluster_address;        ///< dashboard http://HOST:PORT, ray://HOST:PORT or auto ("" = auto)
  double entrypoint_num_cpus = -1;    ///< CPUs per job (-1: scheduler.cpus_per_task)
  double entrypoint_num_gpus = -1;    ///< GPUs per job with GPU kernels (-1: 1; host kernels reserve none)
  env_list env_vars;                  ///< runtime_env.env_vars of every job
  json runtime_env = nullptr;         ///< other runtime_env keys, passed to Ray verbatim
  env_list metadata;                  ///< extra job metadata (strings)
};

/// Where runs execute: Magpie's `scheduler:` keys (environment, max_workers, docker_image,
/// gpu_devices) plus ours for Slurm (src/sched/, docs/slurm.md). Precedence: CLI > kernel YAML >
/// framework config.
struct scheduler_options {
  std::optional<run_environment> environment;  ///< nullopt = not set (local)
  int max_workers = 0;                 ///< Magpie's; accepted (0 = default)
  std::string docker_image;            ///< Magpie's; accepted
  std::vector<int64_t> gpu_devices;    ///< Magpie's; accepted
  std::string partition, account, qos, constraint;  ///< sbatch -p / -A / --qos / -C ("" = cluster default)
  std::string gres;                    ///< sbatch --gres for GPU kernels ("" = gpu:1); host kernels get none
  std::string time_limit = "00:30:00"; ///< sbatch --time per job (MM, MM:SS, HH:MM:SS, D-HH:MM:SS)
  std::string timing_time_limit;       ///< the compare timing job's --time ("" = time_limit)
  std::string mem;                     ///< sbatch --mem ("" = cluster default)
  int cpus_per_task = 1;               ///< sbatch --cpus-per-task
  std::string shared_dir;              ///< batch directory root, visible from every node ("" = <output_dir>/batches)
  std::string magpie_bin;              ///< magpie executable on the nodes ("" = this binary's path)
  std::vector<std::string> sbatch_args;  ///< extra sbatch arguments, verbatim
  std::vector<std::string> setup;      ///< shell lines run in each job before magpie (module load ...)
  double poll_s = 2;                   ///< squeue/sacct polling interval, seconds
  bool wait = true;                    ///< false: submit and return; `magpie jobs collect` merges later
  ray_options ray;                     ///< environment ray (Magpie's ray_config)
};

/// Parses a `scheduler:` mapping (kernel YAML or framework config) into `out`.
status parse_scheduler_section(const config_node& n, const std::string& field, scheduler_options* out);
/// Reads Magpie's `ray_config:` mapping into out->ray (shared_storage_path → out->shared_dir
/// unless already set). Magpie keys that do not apply to magpie jobs are accepted with a warning.
status parse_ray_config(const config_node& n, const std::string& field, scheduler_options* out);
/// The `scheduler:` and `ray_config:` sections of a kernel YAML (a ray_config section runs the
/// file on Ray unless scheduler.environment says otherwise). Errors name file:line:col and field.
status load_scheduler_sections(const fs::path& kernel_yaml, scheduler_options* out);
/// Ok for unset, local, slurm and ray; container is upstream Magpie's stub environment, not
/// provided (the error says so).
status check_environment(std::optional<run_environment> env);
/// The -e/--environment flag's word ("" = not given: nullopt); an unknown word is an error.
status_or<std::optional<run_environment>> environment_from_flag(const std::string& word);

}  // namespace magpie::sched
