// The candidate sandbox (issue 35, docs/harness-protocol.md "The sandbox"): every process that
// runs code under test starts inside fresh Linux namespaces set up by magpie itself — its own
// user, mount, PID, network and IPC namespaces; the whole file system read-only except the
// directories it must write (its working directory, a private /tmp and /dev/shm); a /proc that
// shows only its own processes; no network (only a loopback that is down); no capabilities.
// The supervisor starts `magpie __sandbox [--rw DIR]... [--hide DIR]... -- EXE ARGS...` in place
// of the command; that helper sets the namespaces up, forks the command as PID 1 of the new PID
// namespace and exits with its status. bubblewrap is not used: the GPU machines do not have it,
// and one code path is the one that gets tested.
#pragma once

#include <string>
#include <vector>

#include "core/fs.h"

namespace magpie {

struct sandbox_spec {
  bool enabled = false;
  std::vector<fs::path> writable;  ///< bound read-write (everything else is read-only)
  std::vector<fs::path> hidden;    ///< covered by an empty read-only tmpfs (writable ones reappear)
  std::vector<fs::path> readable;  ///< kept readable (read-only) where the private /tmp covers them
};

/// Why a sandbox cannot be made here ("" when it can): MAGPIE_NO_SANDBOX=1, no magpie
/// executable to re-run, or the kernel refusing the namespaces (e.g. user namespaces disabled by
/// sysctl). Probed once per process (a forked child tries unshare and reports).
std::string sandbox_unavailable_reason();

/// Turns MAGPIE_NO_SANDBOX on for this process and its children (the --no-sandbox flag).
void disable_sandbox();

/// The argv that runs `exe` + `argv[1..]` inside the sandbox through the magpie executable
/// (sandbox_helper_exe()).
std::vector<std::string> sandbox_argv(const sandbox_spec& s, const std::string& exe,
                                      const std::vector<std::string>& argv);
/// The magpie executable that carries the helper ("" when this process is not magpie and
/// MAGPIE_SANDBOX_HELPER does not name one).
std::string sandbox_helper_exe();

/// `magpie __sandbox ...`: never returns (execs the command or exits 125 with a message).
[[noreturn]] void sandbox_helper_main(int argc, char** argv);

}  // namespace magpie
