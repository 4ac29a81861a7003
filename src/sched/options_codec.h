// The scheduler options as JSON (the batch request's scheduler block, report_schema.h has its schema).
#pragma once

#include "core/json.h"
#include "sched/options.h"

namespace magpie::sched {

/// Magpie's ray_config block (cluster_address "auto" when unset, -1 values as null).
json ray_options_json(const ray_options& o);
/// The `scheduler:` block (environment local when unset; ray_config nested).
json scheduler_options_json(const scheduler_options& s);

}  // namespace magpie::sched
