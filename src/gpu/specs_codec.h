// The decoder of a gpu_specs.json document (data/gpu_specs.json or --gpu-spec-table).
#pragma once

#include <string>
#include <vector>

#include "core/json.h"
#include "core/status.h"
#include "gpu/specs.h"

namespace magpie::gpu {

/// Parses a gpu_specs.json document (errors name the entry and field).
status_or<std::vector<spec_entry>> parse_spec_table(const json& doc, const std::string& what);

}  // namespace magpie::gpu
