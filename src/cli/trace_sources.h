// `magpie trace sources`: map kernel names (from a trace, a gap-analysis CSV or the command
// line) to their definitions in the given repository roots. The `magpie trace` dispatcher
// (src/cli/trace.cpp) calls run_trace_sources for the `sources` action.
#pragma once

#include <string>
#include <vector>

#include "cli/subcommand.h"

namespace magpie::cli {

/// `args` are the words after "sources". Returns the process exit code.
int run_trace_sources(const std::vector<std::string>& args, const global_options& g);

}  // namespace magpie::cli
