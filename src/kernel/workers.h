// Parallel compare workers bound to GPUs (Magpie's scheduler.max_workers / --workers and
// scheduler.gpu_devices). Which process runs where:
//   - correctness: the reference (or baseline) first, alone, on the first GPU; then the
//     candidates' correctness processes in parallel, one worker per GPU, each process bound to
//     its worker's GPU through CUDA_VISIBLE_DEVICES (or HIP's / ROCR's variable);
//   - timing: the harness processes of every implementation are split into one group per GPU,
//     identically for every implementation (group g holds processes [g·P/G, (g+1)·P/G) of each),
//     and the groups are sampled in parallel, each with its own interleaved, shuffled rounds and
//     1/G of the sampling budget (every process gets about the samples of a sequential run).
//     A speedup therefore never compares a candidate timed on one GPU with a baseline timed on
//     another: every GPU holds the same processes of every implementation, so the pooled
//     estimate (mean log process median, kernel/verdict.h) is a weighted mean of per-GPU
//     speedups; those per-GPU speedups are reported too (timing_order.devices).
// One worker (the default) keeps the sequential, unbound behaviour.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/json.h"
#include "core/status.h"
#include "kernel/spec.h"
#include "kernel/timing.h"

namespace magpie::kernel {

/// GPUs that workers bind to.
struct device_pool {
  std::string variable = "CUDA_VISIBLE_DEVICES";  ///< or HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES
  std::vector<std::string> ids;  ///< one entry per GPU, as `variable` takes it ("1", "GPU-8a1f...")
  bool pci_order = false;        ///< ids are nvidia-smi indices: bind CUDA_DEVICE_ORDER=PCI_BUS_ID too
  std::string source;            ///< where the list came from (said in the report)
  std::vector<std::string> notes;  ///< GPUs left out and why
  /// The variables that bind one process to ids[slot].
  env_list bind(size_t slot) const;
};

/// Entries of a visible-devices value ("0,1" → {"0","1"}); "" and "-1" (no GPU) give none.
/// An empty entry ("0,,1") is an error naming `variable`.
status_or<std::vector<std::string>> parse_visible_devices(const std::string& variable, const std::string& value);

/// The pool, first match: scheduler.gpu_devices; the first of CUDA_VISIBLE_DEVICES,
/// HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES set in `env` (magpie's own environment); the idle
/// GPUs of nvidia-smi / rocm-smi (gpu/select.h: no compute process, enough free memory);
/// else an empty pool. `amd`: bind with ROCR_VISIBLE_DEVICES (hip kernels).
status_or<device_pool> discover_device_pool(const std::vector<int64_t>& gpu_devices, const std::map<std::string, std::string>& env,
                                            bool amd);

struct worker_plan {
  int requested = 1;  ///< --workers / scheduler.max_workers (0 → 1)
  int workers = 1;    ///< parallel workers; 1 = sequential and unbound
  device_pool pool;   ///< pool.ids[0 .. workers) are used
  std::string reason; ///< why fewer workers than requested ("" when as requested)
  /// True when processes are bound to the pool's GPUs (more than one worker was asked for and a
  /// GPU list was found); false: sequential and unbound, as without workers.
  bool bound() const { return !pool.ids.empty(); }
  /// The variables that bind a process of worker `slot` ({} when not bound).
  env_list bind(int slot) const;
};

/// workers = min(requested, GPUs in the pool); one when a kernel pins the pool's variable in its
/// own env (its choice of GPU is kept).
worker_plan plan_workers(int requested, device_pool pool, const std::vector<kernel_spec>& specs);

/// The plan of a compare request: reads magpie's environment and, when needed, nvidia-smi /
/// rocm-smi. A plan of one worker when max_workers <= 1 (nothing is queried then).
status_or<worker_plan> plan_compare_workers(const eval_request& req);

/// Runs fn(item, slot) for items 0..n-1 on `workers` threads (slot: the worker's index; items
/// are taken in order as workers become free) and on_done(item) on the calling thread as each
/// finishes (progress). workers <= 1: in order on the calling thread.
void run_on_workers(size_t n, int workers, const std::function<void(size_t item, int slot)>& fn,
                    const std::function<void(size_t item)>& on_done = {});

/// Timing over the plan's GPUs (see the file comment); `baseline`: index into req.kernels of the
/// baseline (-1: none), for the per-GPU speedups. With one group it is measure_interleaved with
/// every process bound to the first GPU.
measure_outcome measure_on_devices(const measure_request& req, const worker_plan& plan, int baseline);

/// One result from the groups' results of the same implementation: samples, processes and
/// checks concatenated, counters summed, ok only when every group was ok.
timing_result merge_timing_results(const std::vector<const timing_result*>& parts, const std::vector<std::string>& devices);

}  // namespace magpie::kernel
