// Run workspaces: <out>/<mode>[_<label>]_<YYYYmmdd_HHMMSS>/ (Magpie's layout).
#pragma once

#include <string>

#include "core/fs.h"

namespace magpie {

struct workspace {
  fs::path dir;           ///< absolute path of the created directory
  std::string timestamp;  ///< "YYYYmmdd_HHMMSS" used in the name and reports
};

/// Local time as "YYYYmmdd_HHMMSS".
std::string timestamp_now();
/// ISO-8601 UTC time "YYYY-mm-ddTHH:MM:SSZ".
std::string iso_time_now();

/// Creates the workspace directory. The label is sanitised to [A-Za-z0-9_-]; an empty
/// label is omitted. When the name exists (two runs in one second) "_2", "_3"... is added.
status_or<workspace> create_workspace(const fs::path& output_dir, const std::string& mode,
                                      const std::string& label);

}  // namespace magpie
