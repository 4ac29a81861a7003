#include "core/spawn.h"

#include <signal.h>

#include "core/process_tree.h"

namespace magpie {

int spawn_in_new_session(pid_t* pid, const std::string& exe, const posix_spawn_file_actions_t* fa,
                         std::vector<std::string> argv, std::vector<std::string> envp) {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGCHLD, SIGHUP, SIGQUIT}) sigaddset(&defaults, s);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> av, ev;
  for (auto& a : argv) av.push_back(a.data());
  av.push_back(nullptr);
  for (auto& e : envp) ev.push_back(e.data());
  ev.push_back(nullptr);
  int rc = posix_spawn(pid, exe.c_str(), fa, &attr, av.data(), ev.data());
  posix_spawnattr_destroy(&attr);
  if (rc == 0) note_direct_child(*pid);  // its owner reaps it (reap_orphans leaves it alone)
  return rc;
}

}  // namespace magpie
