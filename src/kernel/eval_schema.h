// The JSON Schema of what kernel_eval_json writes (one entry of an analyze / compare report's
// results): kept beside the writer so that a key added to one and not the other fails
// tests/unit/mcp/report_schema_test.cpp. The MCP analyze tool's output schema takes its
// properties from here.
#pragma once

#include "core/json.h"

namespace magpie::kernel {

/// A closed object: every key kernel_eval_json writes, with the state words of its codecs.
json kernel_eval_schema();

}  // namespace magpie::kernel
