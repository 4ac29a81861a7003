// batch.json's job entries as JSON (batch_codec.cpp reads them back with job_record::from_json).
#pragma once

#include "core/json.h"
#include "sched/batch.h"

namespace magpie::sched {

/// One job of batch.json (its `last` Slurm view by job_info_json).
json job_record_json(const job_record& r);

}  // namespace magpie::sched
