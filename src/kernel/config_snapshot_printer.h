// config.yaml of a kernel run: the one writer of the snapshot a workspace keeps of what was
// run (a local analyze / compare, and the merge of a Slurm / Ray batch, which adds its
// scheduler block).
#pragma once

#include <cstdint>

#include "core/fs.h"
#include "core/json.h"
#include "kernel/spec.h"

namespace magpie::kernel {

/// kernels, reference, correctness, performance (with timing), compare (when `compare`) and
/// run_seed, in that order.
json config_snapshot(const eval_request& req, bool compare, uint64_t run_seed);
/// The snapshot as YAML in <dir>/config.yaml, written atomically.
status write_config_snapshot(const fs::path& dir, const json& snapshot);

}  // namespace magpie::kernel
