// magpie completion bash|zsh: a shell completion script on stdout. Subcommand names come from
// the registry; the flags of a (sub)command are read at completion time from its --help, so the
// script never goes stale when a flag is added.
#include <cstdio>

#include "cli/cli_common.h"
#include "cli/subcommand.h"
#include "core/strings.h"

namespace magpie::cli {
namespace {

/// Second-level actions of the subcommands that have them (each subcommand's dispatcher is the
/// authority; tests/golden/cli_first_hour checks every name here is accepted).
constexpr const char* k_actions[][2] = {
    {"trace", "report gap timeline roofline stages sources"},
    {"results", "list show compare register"},
    {"jobs", "list status cancel collect submit"},
    {"targeted-trace", "adapt-torch postprocess"},
    {"completion", "bash zsh"},
};

std::string bash_script() {
  std::string subs, cases;
  for (const auto& s : subcommands()) subs += std::string(subs.empty() ? "" : " ") + s.name;
  for (const auto& a : k_actions) cases += strprintf("      %s) words=\"%s\" ;;\n", a[0], a[1]);
  return strprintf(R"SH(# magpie bash completion: eval "$(magpie completion bash)" (e.g. in ~/.bashrc)
_magpie() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} i w words skip=0
  local -a cmd=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if ((skip)); then skip=0; continue; fi
    case "$w" in
      -c|--config|-e|--environment|-w|--workers|--docker-image) ((${#cmd[@]} == 0)) && skip=1 ;;
      -*) ;;
      *) cmd+=("$w") ;;
    esac
  done
  if [[ $cur == -* ]]; then
    words=$(command "${COMP_WORDS[0]}" "${cmd[@]:0:2}" --help 2>/dev/null | grep -oE -- '--[a-zA-Z0-9][a-zA-Z0-9-]*' | sort -u)
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
    return
  fi
  if ((${#cmd[@]} == 0)); then
    COMPREPLY=($(compgen -W "%s" -- "$cur"))
    return
  fi
  if ((${#cmd[@]} == 1)); then
    words=""
    case "${cmd[0]}" in
%s    esac
    if [[ -n $words ]]; then COMPREPLY=($(compgen -W "$words" -- "$cur")); return; fi
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -o bashdefault -F _magpie magpie
)SH",
                   subs.c_str(), cases.c_str());
}

std::string zsh_script() {
  // zsh runs the bash function through bashcompinit (the same logic, one place).
  return "# magpie zsh completion: eval \"$(magpie completion zsh)\" (e.g. in ~/.zshrc)\n"
         "autoload -U +X compinit && { (( $+functions[compdef] )) || compinit; }\n"
         "autoload -U +X bashcompinit && bashcompinit\n" +
         bash_script();
}

int run_completion(const std::vector<std::string>& args, const global_options& g) {
  (void)g;
  arg_parser p("magpie completion", "Print a shell completion script for magpie (subcommands, their actions and flags).");
  p.add_positional("SHELL", "bash or zsh", false, true)
      .set_epilog("Install:\n"
                  "  bash: echo 'eval \"$(magpie completion bash)\"' >> ~/.bashrc\n"
                  "  zsh:  echo 'eval \"$(magpie completion zsh)\"' >> ~/.zshrc\n"
                  "Flags are read from 'magpie <subcommand> --help' when you press Tab, so they stay current.");
  if (auto rc = parse_or_exit(p, args)) return *rc;
  const std::string& shell = p.positionals()[0];
  if (shell == "bash") {
    std::fputs(bash_script().c_str(), stdout);
    return k_exit_ok;
  }
  if (shell == "zsh") {
    std::fputs(zsh_script().c_str(), stdout);
    return k_exit_ok;
  }
  std::fprintf(stderr, "magpie completion: unknown shell '%s'%s (bash or zsh)\n", shell.c_str(),
               did_you_mean(shell, {"bash", "zsh"}).c_str());
  return k_exit_usage;
}

}  // namespace
MAGPIE_SUBCOMMAND(completion, "completion", "print a bash or zsh completion script (eval \"$(magpie completion bash)\")",
                  run_completion);
}  // namespace magpie::cli
