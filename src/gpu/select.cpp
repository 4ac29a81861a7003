#include "gpu/select.h"

#include <algorithm>
#include <map>

#include "core/strings.h"
#include "core/subprocess.h"

namespace magpie::gpu {

std::vector<gpu_usage> parse_nvidia_gpu_usage(const std::string& csv) {
  std::vector<gpu_usage> out;
  for (const auto& line : split(csv, '\n')) {
    auto f = split(line, ',');
    if (f.size() < 4) continue;
    auto idx = parse_int(trim(f[0]));
    auto used = parse_double(trim(f[2]));
    auto total = parse_double(trim(f[3]));
    if (!idx || !used || !total) continue;
    out.push_back({static_cast<int>(*idx), std::string(trim(f[1])), *used, *total, 0});
    if (f.size() > 4)
      if (auto util = parse_double(trim(f[4]))) out.back().utilization_pct = *util;
  }
  return out;
}

void add_nvidia_compute_apps(const std::string& csv, std::vector<gpu_usage>& gpus) {
  for (const auto& line : split(csv, '\n')) {
    auto f = split(line, ',');
    if (f.size() < 2 || !parse_int(trim(f[1]))) continue;
    std::string uuid(trim(f[0]));
    for (auto& g : gpus)
      if (g.uuid == uuid) ++g.processes;
  }
}

std::vector<gpu_usage> parse_rocm_meminfo_csv(const std::string& csv) {
  std::vector<gpu_usage> out;
  for (const auto& line : split(csv, '\n')) {
    auto f = split(line, ',');
    if (f.size() < 3) continue;
    std::string dev(trim(f[0]));
    if (!starts_with(dev, "card")) continue;
    auto idx = parse_int(dev.substr(4));
    auto total = parse_double(trim(f[1]));
    auto used = parse_double(trim(f[2]));
    if (!idx || !total || !used) continue;
    constexpr double mib = 1024.0 * 1024.0;
    out.push_back({static_cast<int>(*idx), dev, *used / mib, *total / mib, 0});
  }
  return out;
}

void add_rocm_pid_gpus(const std::string& text, std::vector<gpu_usage>& gpus) {
  auto tokens = split_whitespace(text);
  for (size_t i = 0; i + 4 < tokens.size(); ++i) {
    if (tokens[i] != "PID" || tokens[i + 2] != "is" || tokens[i + 3] != "using") continue;
    auto k = parse_int(tokens[i + 4]);
    if (!k || *k <= 0) continue;
    size_t j = i + 5;
    while (j < tokens.size() && !parse_int(tokens[j])) ++j;  // skip "DRM device(s):"
    for (int64_t n = 0; n < *k && j < tokens.size(); ++n, ++j) {
      auto idx = parse_int(tokens[j]);
      if (!idx) break;
      for (auto& g : gpus)
        if (g.index == *idx) ++g.processes;
    }
  }
}

status_or<selection> choose_idle_gpus(const std::string& vendor, std::vector<gpu_usage> gpus, const selection_request& req) {
  if (req.count < 1) return invalid_argument("gpu_selection.count must be >= 1 (got %d)", req.count);
  selection sel;
  sel.vendor = vendor;
  sel.observed = gpus;
  std::vector<gpu_usage> idle;
  std::vector<std::string> busy;
  for (const auto& g : gpus) {
    if (!req.candidates.empty() && std::find(req.candidates.begin(), req.candidates.end(), g.index) == req.candidates.end())
      continue;
    if (g.processes > 0) busy.push_back(strprintf("%d (%d process(es))", g.index, g.processes));
    else if (g.free_gib() < req.min_free_memory_gb) busy.push_back(strprintf("%d (%.1f GiB free)", g.index, g.free_gib()));
    else if (g.utilization_pct >= req.max_utilization_pct)
      busy.push_back(strprintf("%d (%.0f%% utilized)", g.index, g.utilization_pct));
    else idle.push_back(g);
  }
  const int need = req.allow_fewer ? 1 : req.count;
  if (static_cast<int>(idle.size()) < need)
    return error(status_code::failed_precondition, "needed %d idle GPU(s) but only found %zu (min free memory %.1f GiB); busy: %s",
                 req.count, idle.size(), req.min_free_memory_gb, busy.empty() ? "none" : join(busy, ", ").c_str());
  sel.busy = busy;
  std::stable_sort(idle.begin(), idle.end(), [](const gpu_usage& a, const gpu_usage& b) {
    return a.memory_used_mib != b.memory_used_mib ? a.memory_used_mib < b.memory_used_mib : a.index < b.index;
  });
  std::vector<std::string> ids, local;
  const int take = std::min(req.count, static_cast<int>(idle.size()));
  for (int i = 0; i < take; ++i) {
    sel.indices.push_back(idle[static_cast<size_t>(i)].index);
    ids.push_back(std::to_string(idle[static_cast<size_t>(i)].index));
    local.push_back(std::to_string(i));
  }
  if (vendor == "AMD") {
    sel.env = {{"ROCR_VISIBLE_DEVICES", join(ids, ",")}, {"HIP_VISIBLE_DEVICES", join(local, ",")}};
  } else {
    sel.env = {{"CUDA_VISIBLE_DEVICES", join(ids, ",")}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}};
  }
  return sel;
}

namespace {

std::optional<std::string> tool_output(const std::vector<std::string>& argv) {
  spawn_spec s;
  s.argv = argv;
  auto r = run_command(s, 15.0);
  if (!r.ok() || !r->success()) return std::nullopt;
  return r->out;
}

}  // namespace

status_or<selection> select_idle_gpus(const selection_request& req) {
  if (auto q = tool_output({"nvidia-smi", "--query-gpu=index,uuid,memory.used,memory.total,utilization.gpu",
                            "--format=csv,noheader,nounits"})) {
    auto gpus = parse_nvidia_gpu_usage(*q);
    if (!gpus.empty()) {
      if (auto apps = tool_output({"nvidia-smi", "--query-compute-apps=gpu_uuid,pid", "--format=csv,noheader"}))
        add_nvidia_compute_apps(*apps, gpus);
      return choose_idle_gpus("NVIDIA", std::move(gpus), req);
    }
  }
  if (auto m = tool_output({"rocm-smi", "--showmeminfo", "vram", "--csv"})) {
    auto gpus = parse_rocm_meminfo_csv(*m);
    if (!gpus.empty()) {
      if (auto p = tool_output({"rocm-smi", "--showpidgpus"})) add_rocm_pid_gpus(*p, gpus);
      return choose_idle_gpus("AMD", std::move(gpus), req);
    }
  }
  return error(status_code::failed_precondition, "GPU auto-selection: neither nvidia-smi nor rocm-smi reported a GPU");
}

bool has_visible_devices(const env_list& env) {
  for (const auto& [k, v] : env)
    if (k == "CUDA_VISIBLE_DEVICES" || k == "HIP_VISIBLE_DEVICES" || k == "ROCR_VISIBLE_DEVICES") return true;
  return false;
}

}  // namespace magpie::gpu
