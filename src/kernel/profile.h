// Profiler backends of the performance stage: ncu (CSV parsed), a custom prof_command, and a
// CUPTI kernel summary of a plain (non-protocol) testcase run. rocprof-compute output parsing
// is provided for recorded files (unverified on hardware).
#pragma once

#include <map>

#include "kernel/harness.h"
#include "kernel/prepare.h"

namespace magpie::kernel {

struct ncu_kernel {
  std::string name;             ///< as printed (mangled with --print-kernel-base mangled)
  std::vector<double> time_ns;  ///< gpu__time_duration.sum per launch
  std::map<std::string, std::pair<double, std::string>> metrics;  ///< last value and unit per metric
};

/// Parses `ncu --csv` output (the "ID","Process ID",... table; ==PROF== lines ignored).
/// Values with thousands separators and units ns/us/ms/s (nsecond, usecond, ...) are handled.
std::vector<ncu_kernel> parse_ncu_csv(const std::string& text);

/// Runs the harness in profile mode under `ncu --clock-control none --csv` (or every
/// testcase argv when the harness does not speak the protocol) and summarises per kernel.
stage_result run_ncu(const prepared_kernel& k, const perf_policy& p, const timing_policy& t, uint64_t seed,
                     bool protocol);

/// Runs the kernel's prof_command argvs (upstream Magpie: success → custom_profiling_complete = 1).
stage_result run_prof_command(const prepared_kernel& k, double timeout_s);

/// Runs the testcase once under libmagpie_cupti.so and reports upstream Magpie's `kernels` summary.
stage_result run_cupti_summary(const prepared_kernel& k, const cupti_setup& c, const fs::path& work_dir,
                               double timeout_s);

}  // namespace magpie::kernel
