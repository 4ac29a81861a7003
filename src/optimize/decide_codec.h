// The JSON documents the loop's decisions are made from: `magpie trace sources --json` (source
// confidences) and the workload / request-length / model documents a run's fingerprint hashes.
#pragma once

#include "core/json.h"
#include "optimize/decide.h"

namespace magpie::optimize {

/// kernel name → (confidence, candidates) from `magpie trace sources --json`.
source_confidence_map source_confidences(const json& sources);
/// sha256 of each document's compact dump (16 hex digits) and of the three together.
fingerprint make_fingerprint(const json& workload, const json& request_lens, const json& model);

}  // namespace magpie::optimize
