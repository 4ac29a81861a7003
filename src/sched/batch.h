// A batch: the jobs of one scale-out run on Slurm or Ray (engine.h), kept in
// <shared_dir>/batch_<mode>_<ts>/.
//
//   batch.json        engine, jobs, their ids, last known states (rewritten atomically while tracking)
//   request.json      the full eval_request every job evaluates a part of (written once)
//   jobs/<name>/      task.json, job.sh, slurm-<id>.out | ray-<id>.out, result.json, the job's workspace
//
// Kernel batches (analyze / compare) fan out as:
//   reference   compile + correctness of the reference (the `reference:` entry, else for
//               compare the baseline): one manifest, the gate of every other job
//   k<i>_<id>   one job per kernel (afterany:reference): correctness against that manifest,
//               same run seed; analyze jobs also time their kernel
//   timing      compare only, unless --no-perf (afterany: all kernel jobs): re-checks and times
//               the baseline and every correct candidate together, interleaved, on one node
// Command batches run one magpie command line (e.g. `benchmark ...`) as one job.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "kernel/spec.h"
#include "sched/options.h"
#include "sched/slurm_parse.h"

namespace magpie::sched {

/// What a job does: evaluate the reference, one kernel, time the correct kernels together, or
/// run one magpie command line.
enum class job_role { reference, kernel, timing, command };
/// "reference", "kernel", "timing", "command" (batch.json's and task.json's "role").
const char* job_role_name(job_role r);
std::optional<job_role> parse_job_role(std::string_view word);
inline void to_json(json& j, job_role r) { j = job_role_name(r); }

struct job_record {
  std::string name;                     ///< unique in the batch: reference | k<i>_<id> | timing | command
  job_role role = job_role::kernel;
  std::vector<int> kernels;             ///< request kernel indices it evaluates (kernel role)
  std::vector<std::string> after;       ///< jobs it starts after (afterany), by name
  std::vector<std::string> sbatch_args; ///< slurm: everything but --dependency
  json ray_request = nullptr;           ///< ray: the POST /api/jobs/ body, less submission_id
  fs::path dir;                         ///< <batch>/jobs/<name>
  engine_kind engine = engine_kind::slurm;  ///< the batch's engine (not saved per job)
  bool deferred = false;                ///< ray: submitted by the tracking magpie once `after` jobs ended
  std::string job_id;                   ///< "" until submitted (Slurm id, Ray submission id)
  std::string submit_error;             ///< why sbatch failed
  job_info last;                        ///< last known Slurm view
  int unknown_rounds = 0;               ///< consecutive polls neither squeue nor sacct knew it (not saved)
  /// Errors name the file and field of `f` (batch_codec.cpp).
  static status_or<job_record> from_json(const json_fields& f);
};

/// What a batch runs: the jobs of a kernel analyze or compare, or one magpie command line.
enum class batch_mode { analyze, compare, command };
/// "analyze", "compare", "command" (batch.json's "mode"; batch_codec.cpp).
const char* batch_mode_name(batch_mode m);
std::optional<batch_mode> parse_batch_mode(std::string_view word);
inline void to_json(json& j, batch_mode m) { j = batch_mode_name(m); }
/// The batch mode of a kernel run (analyze or compare; a reference-only run has none).
std::optional<batch_mode> batch_mode_of(kernel::run_mode m);

struct batch {
  fs::path dir;
  engine_kind engine = engine_kind::slurm;
  std::string ray_address;  ///< ray: the dashboard URL (batch.json's engine_config.address); "" for Slurm
  batch_mode mode = batch_mode::analyze;
  std::string created;        ///< ISO-8601 UTC
  std::string token;          ///< 8 random hex digits; Ray submission ids carry it ("" in older batches)
  uint64_t run_seed = 0;      ///< every job's correctness.seed
  fs::path output_dir;        ///< where `collect` writes the merged workspace
  std::string submit_host;
  std::vector<std::string> command;  ///< command batches: the magpie arguments
  std::vector<job_record> jobs;
  json collected = nullptr;   ///< {workspace, report, run_id} after a collect
  status save() const;
  static status_or<batch> load(const fs::path& dir);
  const job_record* find(const std::string& name) const;
  job_record* find(const std::string& name);
  std::vector<std::string> job_ids() const;  ///< submitted ids
};

/// True when the job will not change any more: ended, never submitted (and not deferred), or lost.
bool job_settled(const job_record& j);

/// Absolute shared directory of `so` ("" → <output_dir>/batches).
fs::path resolve_shared_dir(const scheduler_options& so, const fs::path& output_dir);
/// The magpie executable jobs run (scheduler.magpie_bin, else this binary).
fs::path resolve_magpie_bin(const scheduler_options& so);
/// gres for a job evaluating these kernel types: none when all are host kernels.
std::string gres_for(const scheduler_options& so, bool needs_gpu);
/// sbatch arguments common to every job of `so` (partition, account, time, cpus, ...).
std::vector<std::string> common_sbatch_args(const scheduler_options& so, const std::string& time_limit,
                                            const std::string& gres);

/// Plans an analyze or compare batch: fixes the run seed, writes request.json and each job's
/// task.json and job.sh. Nothing is submitted.
status_or<batch> plan_kernel_batch(const kernel::eval_request& req, const scheduler_options& so);
/// Plans a one-job batch that runs `magpie <args...>` (adds -o <job>/results unless given).
status_or<batch> plan_command_batch(const std::vector<std::string>& args, const scheduler_options& so,
                                    const fs::path& output_dir, bool needs_gpu);
class engine;
/// Submits every job in order, dependencies by id (Slurm), or the jobs without dependencies
/// and marks the others deferred (Ray). When one submission fails, the jobs already submitted
/// are cancelled and the error is returned (batch.json records what happened).
status submit_batch(batch& b, engine& e);
/// Deferred jobs whose `after` jobs have all settled are submitted now; a job that the engine
/// rejects gets its submit_error (and is settled). Returns the names submitted. An error only
/// when the engine cannot be reached (the jobs stay deferred).
status_or<std::vector<std::string>> submit_ready(batch& b, engine& e);
/// The engine of these options and, for Ray, its dashboard URL (resolve_ray_address; "" for Slurm).
status engine_for(const scheduler_options& so, engine_kind* kind, std::string* ray_address);

/// The request of a kernel batch (request.json).
status_or<kernel::eval_request> load_batch_request(const batch& b);

}  // namespace magpie::sched
