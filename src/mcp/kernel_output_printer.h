// The analyze tool's structured result (its printer), built from one report entry
// (kernel_eval_json) — a function of its own so that tests/unit/mcp/report_schema_test.cpp
// validates what the tool returns against its output schema without running a kernel.
// Implemented in tools_kernel.cpp beside that output schema, so the keys and their schema stay
// together.
#pragma once

#include <string>

#include "core/fs.h"
#include "core/json.h"

namespace magpie::mcp {

/// {workspace, report_path, kernel row, kernel_type, the entry's stage results, warnings}.
/// `fallback_type`: the kernel_type when the entry has no extra.kernel_type.
json analyze_output(const json& entry, const fs::path& workspace, const std::string& fallback_type, const json& warnings);

}  // namespace magpie::mcp
