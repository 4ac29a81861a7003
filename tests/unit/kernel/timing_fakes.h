// Made-up timing results for the integrity checks' tests (kernel/timing.h, timing_checks.cpp).
#pragma once

#include <string>

#include "kernel/timing.h"

namespace magpie::kernel::timing_fakes {

/// Two host-clock processes of 20 samples of `record_ns`, each leaving `unclaimed_ns` of the
/// supervisor's clock out of its claim, `gap_cpu_per_sample` of CPU time between samples.
inline timing_result fake(double record_ns, double unclaimed_ns, double gap_cpu_per_sample) {
  timing_result r;
  r.ok = true;
  r.source = kernel::timing_source::host_clock;
  for (int p = 0; p < 2; ++p) {
    process_result pr;
    pr.index = p;
    pr.median_ns = record_ns;
    pr.harness_median_ns = record_ns;
    pr.observed_ns = record_ns + unclaimed_ns;
    pr.unclaimed_ns = unclaimed_ns;
    pr.samples_ns.assign(20, record_ns);
    r.processes.push_back(pr);
  }
  r.samples_ns.assign(40, record_ns);
  r.stats = summarize(r.samples_ns);
  r.gap_cpu_samples_ns.assign(40, gap_cpu_per_sample);
  return r;
}

/// The status of check `name` (skipped when it was not made).
inline check_status status_of(const timing_result& r, const std::string& name) {
  for (const auto& c : r.integrity.checks)
    if (c.name == name) return c.status;
  return check_status::skipped;
}

}  // namespace magpie::kernel::timing_fakes
