// Background runs (run handles): a long tool (benchmark) starts a child and returns a handle
// at once; benchmark_status polls it, benchmark_cancel stops it. Runs live as long as the
// server process; on shutdown every running child is killed.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "core/json.h"
#include "core/subprocess.h"

namespace magpie::mcp {

/// A run handle's state; reports spell it as run_state_name() gives.
enum class run_state { queued, running, succeeded, failed, cancelled, timed_out };
/// "queued", "running", "succeeded", "failed", "cancelled", "timed_out".
const char* run_state_name(run_state s);
std::optional<run_state> parse_run_state(std::string_view s);
std::vector<std::string> run_state_names();
/// queued or running.
inline bool is_active(run_state s) { return s == run_state::queued || s == run_state::running; }

/// Turns a finished child run into the structured result ("error" set → state failed).
using finish_fn = std::function<json(const run_result& r, std::string* error)>;
/// What a tool says it started (config, workspace, model, ...): (key, value) pairs, reported
/// back as given, in this order.
using run_info = std::vector<std::pair<std::string, std::string>>;

/// What a run handle reports; printed by run_view_json (mcp/run_view_printer.h).
struct run_view {
  std::string run_id, tool;
  run_state state = run_state::queued;
  double elapsed_s = 0;                ///< since it started, until it finished
  run_info info;
  std::vector<std::string> log_tail;   ///< the last lines of stdout+stderr, oldest first
  json result = nullptr;               ///< the finish function's structured result (null: none)
  std::string error;                   ///< why it failed or timed out ("" otherwise)
};

class run_registry {
 public:
  run_registry() = default;
  ~run_registry();
  run_registry(const run_registry&) = delete;
  run_registry& operator=(const run_registry&) = delete;

  /// Starts `spec` in the background; returns the run id ("run-<n>") or a spawn error. With
  /// `after` (a run id) the run is queued until that run has ended (state "queued"; a spawn
  /// error then fails the run).
  status_or<std::string> start(const std::string& tool, spawn_spec spec, double timeout_s, run_info info,
                               finish_fn finish, const std::string& after = {});
  /// The run with its last `tail_lines` log lines; nullopt for an unknown id.
  std::optional<run_view> status(const std::string& id, size_t tail_lines) const;
  /// Requests cancellation; false for an unknown id or a finished run.
  bool cancel(const std::string& id);
  /// Every run, in id order, without log lines.
  std::vector<run_view> list() const;
  /// Cancels every running child and joins the threads.
  void shutdown();

 private:
  struct run {
    std::string id, tool, error;
    run_state state = run_state::running;
    run_info info;
    json result;
    double started = 0, finished = 0;
    spawn_spec spec;  ///< kept for queued runs, spawned when their predecessor ends
    std::deque<std::string> log;  ///< last lines of stdout+stderr
    bool cancel_requested = false;
    std::thread worker;
  };
  run_view view(const run& r, size_t tail_lines) const;
  /// Waits for the child, then records the outcome (runs on the run's worker thread).
  void supervise(run* rp, std::shared_ptr<child_process> cp, double timeout_s, const finish_fn& finish);

  mutable std::mutex m_mu;
  std::map<std::string, std::unique_ptr<run>> m_runs;
  int m_next = 1;
  bool m_shutdown = false;
};

}  // namespace magpie::mcp
