// The files a finished job left in its directory, read at the file boundary: result.json (written
// by the job's worker at its end) and the report it names. Returned as the documents they are:
// the merge copies their rows into the merged report as written (merge_report_writer.h) and
// `collect` copies the files; callers read single fields with json_fields / json_string.
#pragma once

#include "core/fs.h"
#include "core/json.h"
#include "core/status.h"

namespace magpie::sched {

/// <job_dir>/result.json, written by the job at its end (not_found when it never got there:
/// killed at its time limit, cancelled, node failure, ...).
status_or<json> read_job_result(const fs::path& job_dir);
/// The report the result names (null when none or unreadable).
json read_job_report(const json& result);

}  // namespace magpie::sched
