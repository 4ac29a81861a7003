// `magpie results compare A B`: metric-by-metric comparison of two runs (or two replicate
// groups) with direction, ratio and whether the difference is beyond run-to-run noise.
//
// beyond_noise is decided only from repeated runs (replicates: Welch t-test, or a single run
// against the other side's prediction interval). With one run per side it is "unknown", even
// for a large change; per-request samples or timing spread then give a within-run test that
// is reported separately (within_run_significant) and never promoted to beyond_noise.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/noise.h"
#include "store/results_store.h"

namespace magpie::store {

struct compare_options {
  double alpha = 0.05;             ///< two-sided significance level
  bool expand_replicates = true;   ///< a single ref on a side brings in its replicates
  std::vector<std::string> metric_filters;  ///< substrings; empty = every shared metric
  int resamples = 2000;            ///< bootstrap resamples for within-run tests
  uint64_t seed = 12345;
};

struct metric_comparison {
  std::string name, unit, direction;
  double a = 0, b = 0;             ///< side centers (mean over runs; the value for one run)
  double ratio = 0;                ///< b / a
  double change_pct = 0;           ///< (b − a) / a · 100
  size_t n_a = 0, n_b = 0;         ///< runs per side with this metric
  noise_test run_to_run;           ///< from replicates (tested == false: unknown)
  noise_test within_run;           ///< from per-request samples / timing spread
  std::optional<bool> beyond_noise;  ///< nullopt = unknown (no replicates)
  std::optional<bool> within_run_significant;
  std::string verdict;  ///< improved | regressed | no_significant_change | insufficient_data | info
  std::string basis;    ///< human-readable evidence
};

struct comparison {
  std::vector<run_row> a_runs, b_runs;
  std::vector<metric_comparison> metrics;
  std::vector<std::string> notes;
};

/// `a_refs` / `b_refs`: run ids or workspace paths (one or more per side).
status_or<comparison> compare_runs(const results_store& st, const std::vector<std::string>& a_refs,
                                   const std::vector<std::string>& b_refs, const compare_options& opts);

/// Fixed-width table for the terminal.
std::string comparison_table(const comparison& c);

}  // namespace magpie::store
