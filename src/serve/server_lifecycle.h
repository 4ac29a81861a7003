// Magpie's server_lifecycle (research magpie.md §6.3): an inference server kept alive between
// benchmark runs: a local process group (run_mode local) or a detached, named container
// (run_mode docker: magpie-server-<framework>-<port>, recorded in the .json state file only).
//
// State files: <pid_dir>/<framework>_<port>.pid (the server's pid, leader of its own process
// group) and <framework>_<port>.json (the settings it was started with). A run whose settings
// equal the recorded ones (or with force_reuse) reuses the server when GET /health answers
// 2xx/3xx within 3 s; otherwise a new one is started detached (its output appended to the
// starting run's server.log) and left running. cleanup: true stops it at the end of the run
// (SIGTERM to its group, SIGKILL after 30 s) and removes the state files. A live server started
// with other settings is only replaced when this run has cleanup: true.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

#include "core/json.h"
#include "core/status.h"
#include "serve/bench_config.h"
#include "serve/launcher.h"

namespace magpie::serve {

struct persistent_server {
  pid_t pid = -1;              ///< local mode (-1 in docker mode)
  std::string container;       ///< docker mode: the detached server container's name
  bool reused = false;        ///< an existing server answered; nothing was started
  bool started_here = false;  ///< this process started it (and may reap it)
  endpoint_url url;
  fs::path pid_file, meta_file, log_file;
};

/// <pid_dir> (default ~/.cache/magpie/server).
fs::path lifecycle_dir(const lifecycle_settings& l);

/// A healthy server recorded for this framework/port whose settings match (or force_reuse).
/// Errors: a live recorded server with other settings when cleanup is off (failed_precondition).
/// Returns pid -1 when there is nothing to reuse (stale state is removed; a mismatching live
/// server is stopped when cleanup is on).
status_or<persistent_server> find_reusable_server(const benchmark_config& c, const server_plan& plan);

/// Starts the server of `plan` detached, records its state and waits until /health and
/// /v1/models answer (server_ready_timeout_s). `cancel` is polled (non-empty: stop waiting; the
/// server is then stopped and its state removed).
status_or<persistent_server> start_persistent_server(const benchmark_config& c, const server_plan& plan,
                                                     const fs::path& log_path,
                                                     const std::function<std::string()>& cancel);

/// True while the process is alive (and not a zombie of ours).
bool persistent_server_alive(const persistent_server& s);
/// cleanup: stop the server group (docker: its container, whose output is first saved as
/// <workspace>/reuse_server_container.log) and remove its state files; returns what happened.
std::string release_persistent_server(const persistent_server& s, bool cleanup, const fs::path& workspace = {});

}  // namespace magpie::serve
