// The server plan as the report shows it (argv, env with secrets redacted).
#pragma once

#include "core/json.h"
#include "serve/launcher.h"

namespace magpie::serve {

/// {server_command, launch_command, env, container_name, image, server_trace_dir, profiler_args,
/// url, system_profiler}; secret environment values are "<redacted>".
json server_plan_json(const server_plan& p);

}  // namespace magpie::serve
