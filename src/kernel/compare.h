// One compare result from per-kernel verdicts: the rankings, the winner and upstream Magpie's
// comparison metrics, and the console summary. The local compare (kernel/run.cpp) and the merge
// of a Slurm / Ray batch (sched/merge_compare.cpp) both build their report's results from it, so
// the rule that picks the winner is written once. Its JSON: kernel/compare_printer.h.
#pragma once

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/compare_report_codec.h"
#include "kernel/verdict.h"

namespace magpie::kernel {

/// One implementation as the compare builder sees it (its index is its position).
struct compare_kernel {
  std::string id;
  bool correct = false;        ///< correctness SUCCESS, after every re-check
  bool exit_code_only = false; ///< judged by its testcase's exit code alone (nothing compared)
  verdict v;                   ///< against the baseline (v.index = its position)
  double median_ns = 0;        ///< median of its timed samples (0: not timed)
  double noise = NAN;          ///< relative stdev of its timed samples (nvbench's noise; NaN: unknown)
  size_t samples = 0;          ///< timed samples behind median_ns (0: unknown)
  bool expect_incorrect = false;  ///< kernel_spec::expect_incorrect
  // Its line of the console summary:
  bool rejected = false;       ///< an integrity check failed: marked ✗ although correct
  std::string not_ranked_why;  ///< "[not ranked: <why>]" when its verdict is not_ranked
  std::string note;            ///< appended to the line, e.g. " {job TIMEOUT}"
  std::string detail;          ///< an indented line under it ("" = none)
};

struct compare_result {
  std::vector<compare_kernel> kernels;
  int baseline = 0;
  std::vector<std::pair<int, double>> rankings;  ///< (index, speedup) of ranked verdicts, fastest first
  int winner = -1;                               ///< -1: no kernel is correct
  std::string winner_reason;
  /// "Compared N kernel implementations ...", a table (per implementation: median, noise,
  /// samples, verdict with its interval), "Winner: ..." for the console and results.summary.
  std::string summary() const;
};

/// A verdict ranks when it is neither not_ranked nor implausible and has a speedup.
bool ranks(const verdict& v);

/// Ranks the verdicts and picks the winner: the fastest candidate that is significantly faster
/// than the baseline; else the baseline when it is correct; else the first correct kernel.
/// A winner judged by its exit code alone says so in winner_reason (its correctness is unproven).
compare_result build_compare_result(std::vector<compare_kernel> kernels, int baseline);

/// The verdict a report's verdict object (decoded by core's decode_verdict) stands for; numbers
/// the report left out are 0.
verdict verdict_of(const verdict_record& r);

}  // namespace magpie::kernel
