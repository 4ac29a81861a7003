#include "kernel/cupti_printer.h"

#include <algorithm>

#include "core/stats.h"

namespace magpie::kernel {

json cupti_kernel_summary(const cupti_log& log, bool dem, bool sampled_only) {
  struct agg {
    std::vector<double> d;
    const gpu_op* first = nullptr;
  };
  std::map<std::string, agg> by_name;
  for (const auto& k : log.ops()) {
    if (k.op != "kernel" || (sampled_only && k.sample < 0)) continue;
    auto& a = by_name[k.name];
    a.d.push_back(static_cast<double>(k.end - k.start));
    if (!a.first) a.first = &k;
  }
  std::vector<std::pair<std::string, agg>> rows(by_name.begin(), by_name.end());
  auto total = [](const agg& a) {
    double t = 0;
    for (double x : a.d) t += x;
    return t;
  };
  std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) { return total(a.second) > total(b.second); });
  json out = json::array();
  for (const auto& [name, a] : rows) {
    auto s = summarize(a.d);
    json r;
    r["kernel_name"] = dem ? demangle(name) : name;
    r["mangled_name"] = name;
    r["dispatch_count"] = a.d.size();
    r["duration_ns"] = {{"avg", s.mean}, {"min", s.min}, {"max", s.max}, {"total", total(a)}, {"median", s.median}};
    r["grid"] = {a.first->grid[0], a.first->grid[1], a.first->grid[2]};
    r["block"] = {a.first->block[0], a.first->block[1], a.first->block[2]};
    out.push_back(r);
  }
  return out;
}

}  // namespace magpie::kernel
