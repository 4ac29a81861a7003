// JSON of what a CUPTI record log holds (kernel/cupti_records.h): upstream Magpie's per-kernel
// summary in reports (timing.cupti_kernels, the cupti profiler's `kernels`).
#pragma once

#include "core/json.h"
#include "kernel/cupti_records.h"

namespace magpie::kernel {

/// Per kernel name: count, median/min/max/total duration (ns), grid/block of the first launch.
/// `sampled_only`: only kernels inside a timed sample (drops cache-flush and warm-up work).
json cupti_kernel_summary(const cupti_log& log, bool demangle, bool sampled_only = false);

}  // namespace magpie::kernel
