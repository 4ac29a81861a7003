// Run workspaces: <out>/<mode>[_<label>]_<YYYYmmdd_HHMMSS>/ (upstream Magpie's layout).
#pragma once

#include <string>
#include <vector>

#include "core/fs.h"
#include "core/status.h"

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

/// The marker of a run that did not finish: <workspace>/INCOMPLETE, a JSON object
/// {"state": "interrupted", "reason": text, "signal": N (0: none), "time_unix": seconds}.
constexpr const char* k_incomplete_file = "INCOMPLETE";

/// Writes <ws>/INCOMPLETE atomically (see k_incomplete_file).
status mark_incomplete(const fs::path& ws, const std::string& reason, int signal);
/// The reason recorded in <ws>/INCOMPLETE; "" when the workspace has no marker.
std::string incomplete_reason(const fs::path& ws);

/// A run is writing into `ws` until note_run_finished(ws) (after its report): if this process
/// is interrupted meanwhile (SIGINT/SIGTERM/SIGHUP, install_termination_handlers), the
/// workspace is marked INCOMPLETE, named on stderr and handed to the interrupt recorder. At
/// most 8 runs at once are tracked (more are not marked).
void note_run_in_progress(const fs::path& ws);
void note_run_finished(const fs::path& ws);
/// The command that records an interrupted workspace (its path is appended), e.g. this binary's
/// `results register`; run with stdout on stderr, at most 5 s. Empty: none.
void set_interrupt_recorder(const std::vector<std::string>& argv_prefix);
/// For the termination handler (async-signal-safe). phase 1: write the markers and the stderr
/// message; phase 2: run the recorder for each marked workspace.
void interrupt_runs_signal_safe(int signal, int phase);

}  // namespace magpie
