#include "gpu/detect.h"

#include <cctype>

#include "core/csv.h"
#include "core/fs.h"
#include "core/strings.h"
#include "core/subprocess.h"

namespace magpie::gpu {

std::string parse_rocminfo_arch(const std::string& out) {
  for (size_t i = 0; i + 3 < out.size(); ++i) {
    if ((out[i] == 'g' || out[i] == 'G') && to_lower(out.substr(i, 3)) == "gfx" &&
        (i == 0 || !std::isalnum(static_cast<unsigned char>(out[i - 1])))) {
      size_t j = i + 3;
      while (j < out.size() && (std::isalnum(static_cast<unsigned char>(out[j])) || out[j] == '_')) ++j;
      if (j > i + 3) return to_lower(out.substr(i, j - i));
    }
  }
  return "";
}

std::string compute_cap_to_arch(const std::string& cap) {
  std::string t(trim(cap));
  auto dot = t.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 >= t.size()) return "";
  std::string major = t.substr(0, dot), minor = t.substr(dot + 1);
  if (!parse_int(major) || !parse_int(minor)) return "";
  return "sm_" + major + minor;
}

std::vector<device> parse_nvidia_smi_devices(const std::string& text, std::string* driver) {
  std::vector<device> out;
  auto rows = parse_csv(text, false);
  if (!rows.ok()) return out;
  for (const auto& r : *rows) {
    if (r.size() < 6) continue;
    device d;
    auto idx = parse_int(r[0]);
    if (!idx) continue;
    d.index = static_cast<int>(*idx);
    d.name = std::string(trim(r[1]));
    d.uuid = std::string(trim(r[2]));
    d.memory_total_mib = parse_double(r[3]).value_or(0);
    d.memory_used_mib = parse_double(r[4]).value_or(0);
    d.compute_cap = std::string(trim(r[5]));
    if (r.size() > 6 && driver) *driver = std::string(trim(r[6]));
    out.push_back(d);
  }
  return out;
}

namespace {
std::string run_text(const std::vector<std::string>& argv) {
  spawn_spec s;
  s.argv = argv;
  auto r = run_command(s, 15.0);
  if (!r.ok() || !r->success()) return "";
  return r->out;
}
}  // namespace

gpu_info detect() {
  gpu_info g;
  if (!find_executable("rocminfo").empty()) {
    std::string arch = parse_rocminfo_arch(run_text({"rocminfo"}));
    if (!arch.empty()) {
      g.vendor = "AMD";
      g.architecture = arch;
      if (!find_executable("hipcc").empty()) g.compiler = "hipcc";
      if (!find_executable("rocprof-compute").empty()) g.profiler = "rocprof-compute";
      return g;
    }
  }
  if (!find_executable("nvidia-smi").empty()) {
    std::string csv = run_text({"nvidia-smi",
                                "--query-gpu=index,name,uuid,memory.total,memory.used,compute_cap,driver_version",
                                "--format=csv,noheader,nounits"});
    g.devices = parse_nvidia_smi_devices(csv, &g.driver_version);
    if (!g.devices.empty()) {
      g.architecture = compute_cap_to_arch(g.devices[0].compute_cap);
      if (!g.architecture.empty()) {
        g.vendor = "NVIDIA";
        if (!find_executable("nvcc").empty()) g.compiler = "nvcc";
        if (!find_executable("ncu").empty()) g.profiler = "ncu";
      }
    }
  }
  return g;
}

std::string format_gpu_info(const gpu_info& g) {
  std::string out = "GPU Information:\n";
  out += "  Vendor: " + g.vendor + "\n";
  out += "  Architecture: " + (g.architecture.empty() ? std::string("None") : g.architecture) + "\n";
  if (!g.compiler.empty()) out += "  Compiler: " + g.compiler + "\n";
  if (!g.profiler.empty()) out += "  Profiler: " + g.profiler + "\n";
  for (const auto& d : g.devices)
    out += strprintf("  Device %d: %s (%.0f MiB)\n", d.index, d.name.c_str(), d.memory_total_mib);
  if (!g.detected()) out += "  (No GPU detected)\n";
  return out;
}

}  // namespace magpie::gpu
