// Compile stage and command resolution: turns a kernel_spec into a prepared_kernel.
#pragma once

#include "core/states.h"
#include "kernel/harness.h"

namespace magpie::kernel {

/// Result of one pipeline stage in upstream Magpie's vocabulary.
struct stage_result {
  stage_state state = stage_state::skipped;  ///< reported as upstream Magpie's SUCCESS | FAILED | SKIPPED
  std::vector<std::string> errors;
  json detail = json::object();   ///< stage-specific fields merged into <stage>_result
  bool success() const { return state == stage_state::success; }
  /// Upstream Magpie's {success, errors, ...detail} object, or null when skipped without detail.
};

struct prepare_context {
  std::string gpu_arch;           ///< "sm_90", "gfx942" or "" (none detected)
  fs::path build_root;            ///< <workspace>/build
  bool enable_default_compile = false;  ///< also compile when a testcase_command is given
  double compile_timeout_s = 600;
  /// Log each compile command as it starts (info). Off where compiles run in parallel: the
  /// caller logs them afterwards in kernel order (compile_all), so logs do not interleave.
  bool log_commands = true;
};

/// Directory of a runtime resource shipped with magpie ("include", "python", "data"):
/// next to the binary, ../share/magpie/<name>, or the source tree it was built from.
fs::path resource_dir(const std::string& name);

/// Resolves compile/testcase commands (defaults per type), runs the compile commands and
/// returns the kernel ready to run. `compile` receives the stage outcome; the returned
/// prepared_kernel is usable only when compile->state != stage_state::failed.
prepared_kernel prepare_kernel(const kernel_spec& spec, const prepare_context& ctx, stage_result* compile);

}  // namespace magpie::kernel
