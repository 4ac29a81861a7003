#include "kernel/cupti_printer.h"

namespace magpie::kernel {

json cupti_kernels_json(const std::vector<cupti_kernel_row>& rows) {
  json out = json::array();
  for (const auto& k : rows) {
    json r;
    r["kernel_name"] = k.kernel_name;
    r["mangled_name"] = k.mangled_name;
    r["dispatch_count"] = k.dispatch_count;
    r["duration_ns"] = {{"avg", k.avg_ns}, {"min", k.min_ns}, {"max", k.max_ns}, {"total", k.total_ns}, {"median", k.median_ns}};
    r["grid"] = {k.grid[0], k.grid[1], k.grid[2]};
    r["block"] = {k.block[0], k.block[1], k.block[2]};
    out.push_back(r);
  }
  return out;
}

json cupti_kernel_summary(const cupti_log& log, bool demangle, bool sampled_only) {
  return cupti_kernels_json(cupti_kernel_rows(log, demangle, sampled_only));
}

}  // namespace magpie::kernel
