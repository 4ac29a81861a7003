// GPU detection from vendor tools (rocminfo, nvidia-smi), as upstream Magpie does: the first gfx*
// token of rocminfo means AMD; else nvidia-smi's compute capability "9.0" means sm_90.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace magpie::gpu {

struct device {
  int index = 0;
  std::string name;         ///< "NVIDIA H200"
  std::string uuid;
  double memory_total_mib = 0, memory_used_mib = 0;
  std::string compute_cap;  ///< "9.0" (NVIDIA)
};

struct gpu_info {
  std::string vendor = "UNKNOWN";  ///< AMD | NVIDIA | UNKNOWN
  std::string architecture;        ///< "gfx942" | "sm_90" | "" (none)
  std::string compiler;            ///< hipcc | nvcc | "" (not on PATH)
  std::string profiler;            ///< rocprof-compute | ncu | ""
  std::string driver_version;
  std::vector<device> devices;
  bool detected() const { return !architecture.empty(); }
  /// The vendor's name (AMD | NVIDIA), or "" when none was detected.
  std::string known_vendor() const { return vendor == "UNKNOWN" ? std::string() : vendor; }
};

/// First "gfx<alnum>" token (lower-cased), or "".
std::string parse_rocminfo_arch(const std::string& rocminfo_output);
/// "9.0" → "sm_90"; "" when the text holds no capability.
std::string compute_cap_to_arch(const std::string& cap);
/// Parses `nvidia-smi --query-gpu=index,name,uuid,memory.total,memory.used,compute_cap,driver_version
/// --format=csv,noheader,nounits` lines.
std::vector<device> parse_nvidia_smi_devices(const std::string& csv, std::string* driver_version);

/// Runs the vendor tools (each with a 15 s timeout). Never fails: no GPU → vendor UNKNOWN.
gpu_info detect();
/// Upstream Magpie's "GPU Information:" text block.
std::string format_gpu_info(const gpu_info& g);

}  // namespace magpie::gpu
