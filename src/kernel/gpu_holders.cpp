#include "kernel/gpu_holders.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>

namespace magpie::kernel {

proc_lookup proc_lookup_live() {
  return [](pid_t pid) -> std::optional<proc_row> {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const auto close = all.rfind(')');
    if (close == std::string::npos) return std::nullopt;
    std::istringstream rest(all.substr(close + 1));
    std::string state;
    proc_row r;
    pid_t pgrp = 0;
    if (!(rest >> state >> r.ppid >> pgrp >> r.sid)) return std::nullopt;
    return r;
  };
}

std::vector<gpu_holder> attribute_gpu_holders(const std::vector<gpu::gpu_process>& holders, pid_t self,
                                              pid_t sampled_root, const std::vector<pid_t>& sampled_tree,
                                              const std::vector<pid_t>& live_roots, const proc_lookup& lookup) {
  auto has = [](const std::vector<pid_t>& v, pid_t p) { return std::find(v.begin(), v.end(), p) != v.end(); };
  std::vector<gpu_holder> out;
  for (const auto& p : holders) {
    if (std::any_of(out.begin(), out.end(), [&](const gpu_holder& h) { return h.process.pid == p.pid; })) continue;
    gpu_holder h;
    h.process = p;
    if (p.pid == self) {
      h.kind = holder_kind::supervisor;
    } else if (has(sampled_tree, p.pid)) {
      h.kind = holder_kind::sampled_tree;
      h.harness = sampled_root;
    } else {
      // Up the parent chain: the first live harness root met owns it; reaching magpie first, it
      // left every harness tree (re-parented to the subreaper).
      pid_t at = p.pid;
      for (int depth = 0; at > 1 && depth < 64; ++depth) {
        if (at == self) {
          h.kind = holder_kind::escaped;
          break;
        }
        if (has(live_roots, at)) {
          h.kind = at == sampled_root ? holder_kind::sampled_tree : holder_kind::other_harness;
          h.harness = at;
          break;
        }
        const auto row = lookup(at);
        if (!row) break;
        at = row->ppid;
      }
      if (h.kind == holder_kind::escaped) {
        const auto row = lookup(p.pid);
        h.harness = row && has(live_roots, row->sid) ? row->sid : sampled_root;
      }
    }
    out.push_back(h);
  }
  return out;
}

namespace {
std::mutex g_roots_mu;
std::vector<pid_t>& harness_roots_store() {
  static std::vector<pid_t> r;
  return r;
}
}  // namespace

void register_harness_root(pid_t root) {
  std::lock_guard<std::mutex> lock(g_roots_mu);
  harness_roots_store().push_back(root);
}

void unregister_harness_root(pid_t root) {
  std::lock_guard<std::mutex> lock(g_roots_mu);
  auto& r = harness_roots_store();
  r.erase(std::remove(r.begin(), r.end(), root), r.end());
}

std::vector<pid_t> live_harness_roots() {
  std::lock_guard<std::mutex> lock(g_roots_mu);
  return harness_roots_store();
}

}  // namespace magpie::kernel
