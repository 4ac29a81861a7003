// Idle-GPU auto-selection for serving benchmarks and compare workers (upstream Magpie's find_idle_gpus):
// a GPU is idle when no compute process uses it, its free memory is >= min_free_memory_gb and
// (ours) its utilization is below max_utilization_pct — inside a container nvidia-smi often
// lists no process of another container, but the load still shows. Idle GPUs are taken
// least-used-memory first (ties: lower index). The chosen physical indices are exported as
// CUDA_VISIBLE_DEVICES + CUDA_DEVICE_ORDER=PCI_BUS_ID (NVIDIA) or ROCR_VISIBLE_DEVICES +
// HIP_VISIBLE_DEVICES=0..N-1 (AMD).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/status.h"

namespace magpie::gpu {

struct gpu_usage {
  int index = 0;
  std::string uuid;
  double memory_used_mib = 0, memory_total_mib = 0;
  int processes = 0;  ///< compute processes seen on it
  double utilization_pct = -1;  ///< utilization.gpu (%), -1 when not reported
  double free_gib() const { return (memory_total_mib - memory_used_mib) / 1024.0; }
};

struct selection_request {
  int count = 1;                        ///< GPUs needed (upstream Magpie: gpu_selection.count or TP)
  double min_free_memory_gb = 8.0;      ///< GiB free at least
  double max_utilization_pct = 10.0;    ///< a GPU at or above this utilization (%) is busy
  std::vector<int> candidates;          ///< allowed indices (empty: all; unknown ones ignored)
  bool allow_fewer = false;             ///< take 1..count idle GPUs (error only when none is idle)
};

struct selection {
  std::string vendor;                   ///< NVIDIA | AMD
  std::vector<int> indices;             ///< physical indices chosen
  env_list env;                         ///< variables to export to the server
  std::vector<gpu_usage> observed;      ///< every GPU seen, for the report
  std::vector<std::string> busy;        ///< GPUs passed over and why: "0 (1 process(es))", "2 (3.1 GiB free)"
};

/// `nvidia-smi --query-gpu=index,uuid,memory.used,memory.total[,utilization.gpu]
/// --format=csv,noheader,nounits` ("[N/A]" utilization: not reported).
std::vector<gpu_usage> parse_nvidia_gpu_usage(const std::string& csv);
/// `nvidia-smi --query-compute-apps=gpu_uuid,pid --format=csv,noheader`: process count per uuid
/// is added to the matching GPU.
void add_nvidia_compute_apps(const std::string& csv, std::vector<gpu_usage>& gpus);
/// `rocm-smi --showmeminfo vram --csv` (device,VRAM Total Memory (B),VRAM Total Used Memory (B)).
std::vector<gpu_usage> parse_rocm_meminfo_csv(const std::string& csv);
/// `rocm-smi --showpidgpus`: "PID <p> is using <k> DRM device(s):" followed by k indices.
void add_rocm_pid_gpus(const std::string& text, std::vector<gpu_usage>& gpus);

/// Pure choice over observed GPUs; error "needed N idle GPU(s) but only found M: ..." when short
/// (with allow_fewer: only when none is idle).
status_or<selection> choose_idle_gpus(const std::string& vendor, std::vector<gpu_usage> gpus, const selection_request& req);

/// Runs nvidia-smi (else rocm-smi) and chooses. failed_precondition when neither tool works.
status_or<selection> select_idle_gpus(const selection_request& req);

/// True when one of CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES is in `env`.
bool has_visible_devices(const env_list& env);

}  // namespace magpie::gpu
