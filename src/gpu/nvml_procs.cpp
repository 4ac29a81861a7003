#include "gpu/nvml_procs.h"

#include <dlfcn.h>
#include <unistd.h>

#include <mutex>

#include "core/proc_stat.h"

namespace magpie::gpu {

namespace {

// NVML's ABI (nvml.h): opaque device handle, int return codes (0 = NVML_SUCCESS,
// 7 = NVML_ERROR_INSUFFICIENT_SIZE), nvmlProcessInfo_t v2/v3 layout.
using nvml_device = void*;
struct nvml_process_info {
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
using init_fn = int (*)();
using count_fn = int (*)(unsigned int*);
using handle_fn = int (*)(unsigned int, nvml_device*);
using procs_fn = int (*)(nvml_device, unsigned int*, nvml_process_info*);
using error_fn = const char* (*)(int);

std::string comm_of(pid_t pid) {
  const auto st = proc_stat_of(pid);
  return st ? st->comm : "";
}

}  // namespace

bool is_own_descendant(pid_t pid) {
  const pid_t self = ::getpid();
  for (int depth = 0; pid > 1 && depth < 64; ++depth) {
    if (pid == self) return true;
    const auto st = proc_stat_of(pid);
    if (!st) return false;
    pid = st->ppid;
  }
  return false;
}

namespace {

// NVML loaded and initialised once, on first use, and kept until exit: a snapshot is taken with
// every checked sample's harness stopped, and nvmlInit costs far more than a query.
struct nvml_api {
  std::string why;  ///< non-empty: unusable, and why
  count_fn count = nullptr;
  handle_fn handle = nullptr;
  procs_fn procs = nullptr;
  error_fn err = nullptr;
};

nvml_api load_nvml() {
  nvml_api a;
  void* h = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    a.why = "NVML not found (libnvidia-ml.so.1: no NVIDIA driver here)";
    return a;
  }
  auto init = reinterpret_cast<init_fn>(::dlsym(h, "nvmlInit_v2"));
  a.count = reinterpret_cast<count_fn>(::dlsym(h, "nvmlDeviceGetCount_v2"));
  a.handle = reinterpret_cast<handle_fn>(::dlsym(h, "nvmlDeviceGetHandleByIndex_v2"));
  a.procs = reinterpret_cast<procs_fn>(::dlsym(h, "nvmlDeviceGetComputeRunningProcesses_v3"));
  if (a.procs == nullptr) a.procs = reinterpret_cast<procs_fn>(::dlsym(h, "nvmlDeviceGetComputeRunningProcesses_v2"));
  a.err = reinterpret_cast<error_fn>(::dlsym(h, "nvmlErrorString"));
  if (!init || !a.count || !a.handle || !a.procs) {
    a.why = "NVML lacks nvmlDeviceGetComputeRunningProcesses_v2/_v3 (driver too old)";
    ::dlclose(h);
    return a;
  }
  if (int rc = init(); rc != 0) {
    a.why = std::string("nvmlInit failed: ") + (a.err ? a.err(rc) : std::to_string(rc).c_str());
    ::dlclose(h);
  }
  return a;
}

}  // namespace

gpu_processes list_gpu_compute_processes() {
  static std::mutex mu;
  static const nvml_api api = load_nvml();
  std::lock_guard<std::mutex> lock(mu);
  gpu_processes out;
  out.why = api.why;
  if (!api.why.empty()) return out;
  unsigned int n = 0;
  out.available = api.count(&n) == 0;
  for (unsigned int d = 0; out.available && d < n; ++d) {
    nvml_device dev = nullptr;
    if (api.handle(d, &dev) != 0) continue;
    std::vector<nvml_process_info> buf(64);
    unsigned int k = static_cast<unsigned int>(buf.size());
    int rc = api.procs(dev, &k, buf.data());
    if (rc == 7) {  // NVML_ERROR_INSUFFICIENT_SIZE: k is the count needed
      buf.resize(k + 16);
      k = static_cast<unsigned int>(buf.size());
      rc = api.procs(dev, &k, buf.data());
    }
    if (rc != 0) {
      out.available = false;
      out.why = std::string("nvmlDeviceGetComputeRunningProcesses failed: ") + (api.err ? api.err(rc) : std::to_string(rc).c_str());
      break;
    }
    for (unsigned int i = 0; i < k; ++i) {
      pid_t pid = static_cast<pid_t>(buf[i].pid);
      out.processes.push_back({d, pid, buf[i].used_gpu_memory, comm_of(pid)});
    }
  }
  return out;
}

}  // namespace magpie::gpu
