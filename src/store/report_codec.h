// What the results store reads from a report another process wrote: its metrics and the hash
// of its configuration (read_workspace, store/extract.h, uses them).
#pragma once

#include <string>
#include <vector>

#include "core/json.h"
#include "store/extract.h"

namespace magpie::store {

/// Metrics of a report object of the given mode (exposed for tests).
std::vector<metric> extract_metrics(run_kind mode, const json& report);
/// FNV-1a over the canonical (key-sorted) dump of `config` with volatile keys removed
/// (output_dir, workspace*, timestamp, date, label, start/end times).
std::string config_hash(const json& config);

}  // namespace magpie::store
