// Internal to src/optimize: the state of one loop run, shared by loop.cpp (sequencing, resume,
// the first four steps), analysis.cpp (trace analysis, kernel choice, compare) and series.cpp
// (switch-in, the interleaved end-to-end series, inputs check, decision).
#pragma once

#include <functional>
#include <memory>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "optimize/commands.h"
#include "optimize/decide.h"
#include "optimize/loop.h"
#include "optimize/loop_report.h"
#include "optimize/measure.h"

namespace magpie::optimize {

class loop_run {
 public:
  loop_run(const optimize_config& cfg, const loop_options& opts);
  ~loop_run();
  /// Sequencing; returns the finished report.
  loop_report run();
  status load_resume();
  bool control_failed() const { return m_control_failed; }

 private:
  // loop.cpp
  bool step(const std::string& name, const std::function<status()>& fn);
  void save();
  status step_start_server();
  status step_calibrate();
  status step_baseline_benchmarks();
  status step_profiled_run();
  status_or<std::unique_ptr<variant_server>> start_warm(const std::string& tag, const std::string& variant, int port,
                                                         bool candidate = false);
  status warm_up(const variant_server& s);
  status_or<bench_result> bench(const std::string& name, const variant_server& s, int64_t n, const std::string& dir, bool profile = false);
  // analysis.cpp
  status step_trace_analysis();
  status step_choose_kernel();
  status step_compare();
  // series.cpp
  status step_switch_in();
  status step_after_benchmarks();
  status step_inputs_check();
  status step_e2e();
  /// magpie results compare over the two sides' workspaces into e2e (its verdicts also into
  /// theirs); true when it stopped the loop (different benchmark configurations on one URL).
  bool results_compare(const std::vector<std::string>& a_ws, const std::vector<std::string>& b_ws, const std::set<std::string>& urls,
                       e2e_record* e2e, std::map<std::string, external_verdict>* theirs);
  std::string candidate_variant() const;
  status check_identity(const variant_server& s, bool candidate);
  status run_side(const std::string& side, int pair, std::vector<bench_result>& runs);
  /// The calibrated num_prompts of the report (an error when calibrate has not set it).
  status_or<int64_t> calibrated_prompts() const;
  struct series_clock {
    double elapsed_s = 0, longest_pair_s = 0;  ///< since the series' first run; the slowest pair so far
  };
  bool need_more_pairs(const std::vector<bench_result>& a, const std::vector<bench_result>& b, series_power* power,
                       const series_clock& clock) const;
  /// The record of step `name`, made empty (status running).
  step_record& fresh_step(const std::string& name);

  const optimize_config& m_cfg;
  loop_options m_opts;
  server_env m_env;
  command_runner m_cmds;
  loop_report m_report;
  loop_report m_resumed;                ///< the earlier report (resume)
  std::optional<stop_reason> m_stop;    ///< set by a step that decided to stop
  std::unique_ptr<variant_server> m_baseline, m_side_a, m_side_b;
  std::vector<bench_result> m_a_runs, m_b_runs;
  int m_port = 0, m_port_b = 0, m_starts = 0;
  size_t m_first = 0;                   ///< index of the first step that runs
  bool m_control_failed = false;
};

}  // namespace magpie::optimize
