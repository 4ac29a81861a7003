// The loop's configuration as JSON (loop_report.json "config", `magpie optimize --plan`).
#pragma once

#include "core/json.h"
#include "optimize/config.h"

namespace magpie::optimize {

json optimize_config_json(const optimize_config& c);

}  // namespace magpie::optimize
