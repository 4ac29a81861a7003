// A stored run as JSON (`magpie results list/show --json`).
#pragma once

#include "core/json.h"
#include "store/results_store.h"

namespace magpie::store {

/// {id, workspace, mode, name, timestamp, registered_at, success, state, config_hash,
///  replicate_group, report_path, summary}.
json run_to_json(const run_row& r);

}  // namespace magpie::store
