// The results store: every run workspace registered in SQLite databases (the per-user store,
// user_db_path(), and <output-dir>/magpie_results.sqlite beside the run), with its metrics and
// per-request samples, so that runs can be listed, shown and compared later (`magpie results …`,
// MCP tools).
//
// Replicates: runs of one mode whose configuration hash is equal (or that were registered with
// the same explicit replicate group) are repeated runs of one configuration; comparisons use
// them to measure run-to-run noise.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/json.h"
#include "core/status.h"
#include "store/extract.h"

namespace magpie::store {

class database;

constexpr const char* k_default_db_name = "magpie_results.sqlite";

/// <output_dir>/magpie_results.sqlite.
fs::path default_db_path(const fs::path& output_dir);

/// The per-user store, the default of `magpie results`: $MAGPIE_RESULTS (a database file), else
/// $XDG_DATA_HOME/magpie/results.sqlite, else $HOME/.local/share/magpie/results.sqlite; empty
/// when none of these is set.
fs::path user_db_path();

/// The stores a finished run in `workspace_dir` is registered in: its output directory's
/// (default_db_path of the parent) and the per-user one when it is a different file.
std::vector<fs::path> run_db_paths(const fs::path& workspace_dir);

struct register_options {
  std::string replicate_group;  ///< explicit group (overrides the configuration hash); "" = hash
};

/// Reads `workspace_dir` and registers it (re-registering a workspace replaces its rows).
/// Creates the database and its directory when needed. Returns the run id.
/// Safe to call from concurrent processes (SQLite locking with a busy timeout).
status_or<int64_t> register_workspace(const fs::path& db_path, const fs::path& workspace_dir,
                                      const register_options& opts = {});

/// After a run: registers `workspace_dir` in every store of run_db_paths() and logs the run id
/// (stderr). A failure is logged as a warning, never fails the run. Skipped when
/// the environment sets MAGPIE_NO_STORE=1. Returns the run id in the output directory's store,
/// or 0 when not registered there.
int64_t register_after_run(const fs::path& workspace_dir);

struct run_row {
  int64_t id = 0;
  fs::path workspace;
  std::string mode, name, timestamp, registered_at, config_hash, replicate_group;
  bool success = false;
  std::string state = "complete";  ///< complete | interrupted (the workspace is marked INCOMPLETE)
  fs::path report_path;
  json summary = json::object();
  /// The key replicates share: "group:<name>" or "hash:<config_hash>".
  std::string group_key() const;
};

class results_store {
 public:
  /// Opens (creating) the database and its schema.
  static status_or<results_store> open(const fs::path& db_path);
  results_store(results_store&&) noexcept;
  results_store& operator=(results_store&&) noexcept;
  ~results_store();

  status_or<int64_t> add(const run_record& rec, const register_options& opts);
  /// Newest first (timestamp, then id); mode "" = all; limit <= 0 = no limit.
  status_or<std::vector<run_row>> list(const std::string& mode, int limit) const;
  /// By id ("12") or workspace path (absolute or relative to the cwd).
  status_or<run_row> find(const std::string& ref) const;
  status_or<std::vector<metric>> metrics(int64_t run_id) const;
  status_or<std::map<std::string, std::vector<double>>> samples(int64_t run_id) const;
  /// Runs of the same mode and group key as `run` (including it), oldest first.
  status_or<std::vector<run_row>> replicates(const run_row& run) const;
  const fs::path& path() const;

 private:
  results_store() = default;
  std::unique_ptr<database> m_db;
};

}  // namespace magpie::store
