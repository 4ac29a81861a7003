// What every subcommand's entry does the same way: the parse-or-help preamble.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/args.h"

namespace magpie::cli {

/// Parses `args` with `p`. Returns the exit code to stop with: k_exit_usage after printing a
/// usage error (with a "did you mean" hint for a mistyped flag) on stderr, k_exit_ok after
/// printing --help on stdout; std::nullopt when the command should go on.
/// Use: `if (auto rc = parse_or_exit(p, args)) return *rc;`
std::optional<int> parse_or_exit(arg_parser& p, const std::vector<std::string>& args);

/// For a subcommand with actions ("results list", "jobs status"): the action named by args[0]
/// is not one of `actions`: the error names it, suggests the nearest and shows `usage` (stderr).
int unknown_action(const std::string& prog, const std::string& action, const std::vector<std::string>& actions,
                   const std::string& usage);

}  // namespace magpie::cli
