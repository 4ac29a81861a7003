// The MCP server's trust model (docs/mcp.md, "Trust model"): what a client may make magpie do.
//
// * Paths: every path a client passes is resolved (relative ones against the workspace root,
//   '~' as the home directory, every symlink followed, dangling ones included) and must stay
//   inside the workspace root (--workspace-root, default the server's current directory) or the
//   operator's results directory (-o). Refusals name the argument, the path and where it led.
// * Programs: by default magpie runs only its own pipelines (its default compile commands, its
//   harnesses, the frameworks' launchers with magpie's arguments). A client-chosen program
//   (compile_command, testcase_command(s), a server command, optimize's python) runs only when
//   the server was started with --allow-command naming it, or --trust-client; client-chosen
//   arguments to programs magpie runs (server args, nsys args, extra_args flags that are not
//   plain client settings, a docker image, environment variables that load code) only with
//   --trust-client.
// The JSON arguments of a tools/call are checked by apply_trust_policy (policy_args_codec.h).
#pragma once

#include <string>
#include <vector>

#include "core/fs.h"
#include "core/status.h"

namespace magpie::mcp {

struct trust_policy {
  fs::path root;                               ///< canonical workspace root
  std::vector<fs::path> also_allowed;          ///< canonical operator directories (the -o results dir)
  std::vector<std::string> allowed_programs;   ///< --allow-command values, as given
  bool trust_client = false;                   ///< --trust-client: every command and argument allowed
  /// One line for the server's log: root, programs, trust.
  std::string describe() const;
};

/// Builds the policy: `root` must be an existing directory; `output_dir` (made absolute against
/// the current directory) is allowed too.
status_or<trust_policy> make_trust_policy(const fs::path& root, const fs::path& output_dir,
                                          std::vector<std::string> allowed_programs, bool trust_client);

/// The path as the process would reach it: absolute, '.', '..' and every symlink resolved.
/// Errors: embedded NUL, a symlink loop.
status_or<fs::path> resolve_path(const fs::path& root, const std::string& value);
/// resolve_path() confined to the policy's roots; the error names `field`, `value` and where it led.
status_or<fs::path> confine_path(const trust_policy& p, const std::string& field, const std::string& value);

/// A client-chosen command (argv; relative programs resolved against `cwd`): allowed when the
/// client is trusted or argv[0] names an --allow-command program.
status check_command(const trust_policy& p, const std::string& field, const std::vector<std::string>& argv,
                     const fs::path& cwd);
/// Something only --trust-client allows; the error names `field` and says `what` it is.
status require_trust(const trust_policy& p, const std::string& field, const std::string& what);
/// Environment variables a client may not set without --trust-client (they load code or change
/// which program runs: LD_*, PATH, PYTHON*, *_ARGS, ...).
bool env_needs_trust(const std::string& key);

/// `magpie benchmark` flags in a client's extra_args: plain client settings pass, path values
/// are confined (and rewritten to the resolved path), the rest needs --trust-client.
status_or<std::vector<std::string>> check_benchmark_args(const trust_policy& p, const std::string& field,
                                                         const std::vector<std::string>& args);

}  // namespace magpie::mcp
