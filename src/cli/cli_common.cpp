#include "cli/cli_common.h"

#include <cstdio>

#include "cli/subcommand.h"
#include "core/strings.h"

namespace magpie::cli {

std::optional<int> parse_or_exit(arg_parser& p, const std::vector<std::string>& args) {
  if (auto st = p.parse(args); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return k_exit_usage;
  }
  if (p.help_requested()) {
    std::fputs(p.help().c_str(), stdout);
    return k_exit_ok;
  }
  return std::nullopt;
}

int unknown_action(const std::string& prog, const std::string& action, const std::vector<std::string>& actions,
                   const std::string& usage) {
  std::fprintf(stderr, "%s: unknown action '%s'%s\n%s", prog.c_str(), action.c_str(),
               did_you_mean(action, actions).c_str(), usage.c_str());
  return k_exit_usage;
}

}  // namespace magpie::cli
