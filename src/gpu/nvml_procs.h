// Which processes hold a GPU (issue 35): NVML's running compute processes, loaded with dlopen
// (libnvidia-ml.so.1 comes with the NVIDIA driver; nothing is linked). Used by the timing stage's
// `gpu_processes` check: only the supervisor's own harness processes may hold the GPU.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace magpie::gpu {

struct gpu_process {
  unsigned device = 0;
  pid_t pid = 0;             ///< in the caller's PID namespace
  unsigned long long used_bytes = 0;
  std::string name;          ///< /proc/<pid>/comm, "" when not visible
};

struct gpu_processes {
  bool available = false;    ///< false: `why` says why (no NVML, init failed)
  std::string why;
  std::vector<gpu_process> processes;
};

/// Every compute process on every NVIDIA GPU NVML sees. NVML is loaded and initialised on the
/// first call and kept until exit (a failure to load is kept too); thread-safe.
gpu_processes list_gpu_compute_processes();

/// Whether `pid` is this process or one of its descendants (parent chain in /proc).
bool is_own_descendant(pid_t pid);

}  // namespace magpie::gpu
