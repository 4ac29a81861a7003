// JSON of a kernel spec and the measurement policies (kernel/spec.h), as reports, config.yaml
// snapshots and scale-out task files print them.
#pragma once

#include "core/json.h"
#include "kernel/spec.h"

namespace magpie::kernel {

/// A report's kernel_config (and a config snapshot's kernels[] entry).
json kernel_spec_json(const kernel_spec& s);
json correctness_policy_json(const correctness_policy& p);
json timing_policy_json(const timing_policy& p);
json compare_policy_json(const compare_policy& p);
json perf_policy_json(const perf_policy& p);

}  // namespace magpie::kernel
