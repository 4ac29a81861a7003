// Helpers shared by the tool implementations: argument access, output directories, running
// this binary's CLI with progress/cancellation, and locating the workspace a run created.
#pragma once

#include <string>
#include <vector>

#include "core/fs.h"
#include "core/json.h"
#include "mcp/child_run.h"
#include "mcp/tool_args_codec.h"
#include "mcp/tool_protocol.h"

namespace magpie::mcp {

/// An output directory argument's value ("" = the server default) as an absolute path, created.
status_or<fs::path> output_dir_path(const std::string& value, const tool_context& ctx);

struct cli_run {
  child_outcome outcome;
  std::vector<std::string> stdout_lines;
  fs::path workspace;  ///< from a "Workspace: <dir>" line, else the newest new <prefix>* dir
};

/// Runs `magpie <args…>` with progress notifications from its log lines. Errors: spawn
/// failure, cancellation, timeout, or a subcommand this build does not have (clear message).
status_or<cli_run> run_magpie(tool_context& ctx, const std::vector<std::string>& args, double timeout_s,
                              const fs::path& out_dir = {}, const std::string& workspace_prefix = {});

/// Writes `text` to a fresh file <out_dir>/.mcp_requests/<stem>_<n>.<ext>; returns its path.
status_or<fs::path> write_request_file(const fs::path& out_dir, const std::string& stem, const std::string& ext,
                                       const std::string& text);


/// Kernel type names accepted by analyze/compare.
const std::vector<std::string>& kernel_types();

}  // namespace magpie::mcp
