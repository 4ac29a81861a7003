// A job's last known Slurm view as JSON (schema: report_schema.h).
#pragma once

#include "core/json.h"
#include "sched/slurm_parse.h"

namespace magpie::sched {

/// {job_id, name, state, state_text, reason, nodes, exit_code, exit_signal, elapsed_s, start, end,
/// time_limit, source}; unknown values are null.
json job_info_json(const job_info& j);

}  // namespace magpie::sched
