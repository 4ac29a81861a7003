// batch.json's job entries as JSON (batch_codec.cpp reads them back with job_record::from_json),
// and request.json's scheduler block read back as written.
#pragma once

#include "core/json.h"
#include "sched/batch.h"

namespace magpie::sched {

/// One job of batch.json (its `last` Slurm view by job_info_json).
json job_record_json(const job_record& r);
/// The scheduler options a kernel batch was planned with (request.json's "scheduler" block,
/// scheduler_options_json's output), as written, for the merged report and the config snapshot;
/// null when request.json is unreadable or has none.
json batch_options_json(const batch& b);

}  // namespace magpie::sched
