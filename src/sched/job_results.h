// What finished jobs left in their directories (result.json and the report it names), read by
// the compare timing job on its node and by `collect` on the submitting host.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/states.h"
#include "core/state_row_codec.h"
#include "kernel/spec.h"
#include "sched/batch.h"
#include "sched/job_files_codec.h"

namespace magpie::sched {

/// The gate of a kernel batch: the reference job's manifest. `failure` is set when the job
/// wrote no usable result, so candidates fail the way they do locally when the reference fails.
/// nullopt when the batch has no reference job.
std::optional<kernel::external_reference> reference_from_job(const batch& b);

/// The correctness outcome of one request kernel, from the job that evaluated it.
struct kernel_row {
  int index = 0;
  std::string job;         ///< job name ("reference" for compare's baseline-as-reference)
  json row = nullptr;      ///< its kernel_eval_json (null when the job wrote none)
  std::string missing;     ///< why `row` is null
  bool correct() const { return row_correct(row); }
};
std::vector<kernel_row> correctness_rows(const batch& b, const kernel::eval_request& req);

}  // namespace magpie::sched
