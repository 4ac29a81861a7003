// JSON Schemas of what sched writes for other processes and the MCP jobs tools: job rows
// (job_info_json (slurm_codec.h)), the `magpie jobs list --json` and `status --json` objects (built here,
// batch_list_row / batch_status_json), a batch's `collected` record, and the merged analyze /
// compare report of `magpie jobs collect --json` (merge.cpp, merge_compare.cpp). Kept beside
// the writers: tests/unit/sched validates their output against them (closed objects).
#pragma once

#include <string>

#include "core/json.h"
#include "sched/batch.h"

namespace magpie::sched {

/// job_info_json (slurm_codec.h) (a job's last known state).
json job_info_schema();
/// A job of `jobs status --json`: job_info + name, role.
json job_row_schema();
/// scheduler_options_json (options_codec.h) (the batch request's scheduler block).
json scheduler_options_schema();
/// batch::collected after a collect ({workspace, report, run_id, db, at} or {workspaces, at}).
json collected_schema();

/// One row of `magpie jobs list --json`.
json batch_list_row(const batch& b);
json batch_list_row_schema();
/// `magpie jobs status --json`: {batch, engine, mode, status, jobs[]}.
json batch_status_json(const batch& b);
json batch_status_schema();

/// `magpie jobs collect --json`: the merged report of an analyze ("analyze") or compare
/// ("compare") batch, or {} for a command batch; "any" accepts all three.
json merged_report_schema(const std::string& mode);

}  // namespace magpie::sched
