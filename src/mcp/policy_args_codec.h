// The trust model (policy.h) applied to one tools/call's arguments as the client sent them: the
// reader and rewriter of the JSON arguments by name (every path argument of any tool, batch
// configs included; the generic command arguments). The server applies it before the handler
// decodes its arguments; policy.h holds the typed checks it is built on.
#pragma once

#include <string>

#include "core/json.h"
#include "core/status.h"
#include "mcp/policy.h"

namespace magpie::mcp {

/// Applies the policy to one tools/call: path arguments (any tool; batch configs too) resolved,
/// confined and rewritten to absolute paths; the generic command arguments checked. Returns the
/// arguments to hand to the tool, or the refusal.
status_or<json> apply_trust_policy(const std::string& tool, const json& args, const trust_policy& p);

}  // namespace magpie::mcp
