// Collecting a batch: the merged report in a workspace under the batch's output directory
// (<output_dir>/<mode>[_<label>]_<ts>/, as a local run), the jobs' small files copied into its
// jobs/ folder (results, reports, Slurm logs; bulk artifacts stay in the shared directory),
// and the workspace registered in the results store (<output_dir>/magpie_results.sqlite).
#pragma once

#include "sched/batch.h"

namespace magpie::sched {

struct collect_options {
  bool register_in_store = true;
  fs::path db_path;  ///< "" = <output_dir>/magpie_results.sqlite
};

struct collect_outcome {
  fs::path workspace, report_path;  ///< empty for command batches
  std::vector<fs::path> registered; ///< workspaces added to the store
  int64_t run_id = -1;              ///< store id of the merged workspace
  json report;
  std::string console;
  int exit_code = 0;
};

/// Merges (analyze / compare) or gathers (command) what the jobs wrote. The job states in `b`
/// should be fresh (refresh_batch / wait_batch first); jobs still running are reported as such.
status_or<collect_outcome> collect_batch(batch& b, const collect_options& o = {});

}  // namespace magpie::sched
