// Compare verdicts from typed per-implementation samples: one function shared by the local
// compare and (through the report) the Slurm merge. Each implementation is measured in several
// harness processes; the speedup interval covers the within-process noise of every process's
// median and the between-process variance (pooled over the run's implementations).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/states.h"
#include "kernel/spec.h"

namespace magpie::kernel {

/// Samples of record (ns per launch) of one implementation, one vector per process.
struct impl_samples {
  std::vector<std::vector<double>> processes;
};

/// What the verdict builder needs to know about one implementation.
struct verdict_input {
  std::string id;
  bool correct = false;           ///< correctness SUCCESS (timed outputs checked included)
  bool timed = false;             ///< timing succeeded and passed its integrity checks
  std::string not_timed_reason;   ///< why not (integrity failure, timing error, ...)
  bool implausible = false;       ///< faster than the physical floor
  double floor_ns = 0;            ///< that floor (0: none)
  bool trusted_timer = true;      ///< false: a timer inside the candidate's process, unvalidated
  impl_samples samples;
};

/// The verdict words (core/states.h: reports are read back by modules that do not link kernel).
using magpie::parse_verdict_kind;
using magpie::verdict_kind;
using magpie::verdict_kind_name;
using magpie::verdict_kind_names;

struct verdict {
  int index = 0;
  verdict_kind verdict = verdict_kind::not_ranked;
  double speedup = 0, ci_low = 0, ci_high = 0;  ///< median(baseline) / median(candidate)
  int df = 0;                                   ///< degrees of freedom of the interval
  std::string reason;
  json to_json(const std::string& id, double confidence, double median_ns) const;
};

/// Between-process variance of log(process median), pooled over implementations.
struct process_variance {
  double var = 0;  ///< σ²_b (log scale)
  int df = 0;      ///< Σ (processes − 1)
};

/// log(median) of each process and the bootstrap variance of each (resampling its samples).
struct process_medians {
  std::vector<double> log_median, within_var;
};
process_medians summarize_processes(const impl_samples& s, int resamples, uint64_t seed);

process_variance pool_between_process(const std::vector<process_medians>& impls);

/// Estimate and interval of median(base)/median(cand): the mean log process median of each
/// side, variance σ²_b/P + Σ within/P² per side, Student-t quantile with the pooled df.
verdict estimate_speedup(const process_medians& base, const process_medians& cand, const process_variance& pv,
                         const compare_policy& p);

/// Verdicts for every implementation against `baseline`.
std::vector<verdict> build_verdicts(const std::vector<verdict_input>& impls, int baseline, const compare_policy& p,
                                    uint64_t seed);

/// Two-sided Student-t quantile: P(|T_df| <= t) = confidence. df <= 0: the normal quantile.
double t_quantile(double confidence, int df);

}  // namespace magpie::kernel
