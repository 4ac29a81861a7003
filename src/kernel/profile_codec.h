// Profiler output formats read by the performance stage (kernel/profile.h; defined in profile.cpp
// beside the ncu CSV reader they share).
#pragma once

#include <string>

#include "core/json.h"
#include "core/status.h"

namespace magpie::kernel {

/// rocprof-compute pmc_perf.csv → per-dispatch durations grouped per kernel (upstream Magpie's
/// kernel summary; runtime kernels __amd_rocclr_* / __hip_* dropped).
status_or<json> parse_rocprof_pmc_perf(const std::string& csv_text);

}  // namespace magpie::kernel
