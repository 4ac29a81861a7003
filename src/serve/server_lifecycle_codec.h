// A persistent server's record as JSON: the report's lifecycle block and the state file's metadata.
#pragma once

#include "core/json.h"
#include "serve/bench_config.h"
#include "serve/launcher.h"
#include "serve/server_lifecycle.h"

namespace magpie::serve {

/// {pid, reused, url, pid_file, state_file, log, container} (the report's server.lifecycle).
json persistent_server_json(const persistent_server& s);
/// The settings a reuse must match: framework, model, port, the server command and env.
json lifecycle_metadata(const benchmark_config& c, const server_plan& plan);

}  // namespace magpie::serve
