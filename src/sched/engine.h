// One interface, two engines: what a batch needs from the system that runs its jobs.
//   slurm  sbatch / squeue + sacct / scancel (slurm_client); dependencies are Slurm's afterany
//   ray    the Ray Jobs REST API of the dashboard (ray_client): submit, status, logs, stop; Ray
//          has no job dependencies, so the tracking magpie submits a job once those it starts
//          after have ended (job_record::deferred)
// Planning (batch.cpp), tracking (monitor.cpp), merging and collecting are shared.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sched/batch.h"
#include "sched/ray_jobs_protocol.h"
#include "sched/slurm_client.h"

namespace magpie::sched {

class engine {
 public:
  virtual ~engine() = default;
  /// "slurm" | "ray" (batch.json's engine).
  virtual const char* name() const = 0;
  /// Ok when jobs can be submitted and tracked (tools on PATH, dashboard answering); the error
  /// says what is missing and how to point magpie at the cluster.
  virtual status check() = 0;
  /// True when the engine holds a job until its `after` jobs have ended (Slurm's afterany).
  virtual bool native_dependencies() const = 0;
  /// Submits one planned job; `after_ids` are the engine ids of its dependencies (only with
  /// native dependencies). Returns the job's id.
  virtual status_or<std::string> submit(const batch& b, const job_record& j, const std::vector<std::string>& after_ids) = 0;
  /// Current state of each id (state unknown for ids the engine does not know). An error only
  /// when the engine itself could not be asked.
  virtual status_or<std::map<std::string, job_info>> query(const std::vector<std::string>& ids) = 0;
  /// Stops the jobs; one that has already ended is not an error.
  virtual status cancel(const std::vector<std::string>& ids) = 0;
  /// Called once a job has ended: leaves its output in its log file (job_log_path) when the
  /// engine keeps it elsewhere (Ray). Failures are logged, not returned.
  virtual void save_log(const job_record& j) { (void)j; }
  /// True when an ended job's state may still be refined by asking again (Slurm's sacct lags squeue).
  virtual bool confirms_late() const { return false; }
};

/// The engine a batch was planned for (batch.engine; the Ray address from batch.json).
status_or<std::unique_ptr<engine>> make_engine(const batch& b);
/// By kind and Ray dashboard address, as engine_for() gives them for scheduler options.
status_or<std::unique_ptr<engine>> make_engine(engine_kind kind, const std::string& ray_address);
/// The engines over an injected transport (tests) or the real one.
std::unique_ptr<engine> make_slurm_engine(command_runner run);
std::unique_ptr<engine> make_ray_engine(ray_client client);

/// The job's output file in its directory: slurm-<id>.out (Slurm), ray-<id>.out (Ray).
fs::path job_log_path(const job_record& j);

}  // namespace magpie::sched
