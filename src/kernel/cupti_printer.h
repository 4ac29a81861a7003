// JSON of what a CUPTI record log holds (kernel/cupti_records.h): upstream Magpie's per-kernel
// summary in reports (timing.cupti_kernels, the cupti profiler's `kernels`).
#pragma once

#include <vector>

#include "core/json.h"
#include "kernel/cupti_records.h"

namespace magpie::kernel {

/// [{kernel_name, mangled_name, dispatch_count, duration_ns {avg, min, max, total, median}, grid, block}]
json cupti_kernels_json(const std::vector<cupti_kernel_row>& rows);
/// cupti_kernels_json of cupti_kernel_rows(log, demangle, sampled_only).
json cupti_kernel_summary(const cupti_log& log, bool demangle, bool sampled_only = false);

}  // namespace magpie::kernel
