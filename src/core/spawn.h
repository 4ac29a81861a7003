// One way to start a child process for every magpie module: posix_spawn in a new session (so a
// whole process group can be signalled and a terminal's Ctrl-C reaches magpie only), with no
// blocked signals and SIGPIPE/INT/TERM/CHLD/HUP/QUIT at their default actions whatever magpie
// itself has installed or blocked.
#pragma once

#include <spawn.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace magpie {

/// Starts `exe` (an absolute path) with `argv` and the environment `envp` ("KEY=value"),
/// applying the file actions `fa` (may be null). Returns 0 and sets *pid, or the errno value of
/// the failure.
int spawn_in_new_session(pid_t* pid, const std::string& exe, const posix_spawn_file_actions_t* fa,
                         std::vector<std::string> argv, std::vector<std::string> envp);

}  // namespace magpie
