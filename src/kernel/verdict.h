// Compare verdicts from typed per-implementation samples: one function shared by the local
// compare and (through the report) the Slurm merge. Each implementation is measured in several
// harness processes; the speedup interval covers the within-process noise of every process's
// median and the between-process variance (pooled over the run's implementations).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/states.h"
#include "kernel/spec.h"

namespace magpie::kernel {

/// Samples of record (ns per launch) of one implementation, one vector per process.
struct impl_samples {
  std::vector<std::vector<double>> processes;
  /// The round of each sample (parallel to `processes`; empty: unknown, nothing is adjusted).
  std::vector<std::vector<int>> rounds;
};

/// The samples with each round's shared load divided out: a sample of process i in round r is
/// divided by exp(median over the OTHER processes sampled in round r — of every implementation
/// given — of log(their sample / their process's median)). Rounds where fewer than 2 other
/// processes were sampled, and implementations without `rounds`, are kept as they are. The load
/// that a round puts on every process cancels in the ratio of two implementations; the medians'
/// bootstrap, which resamples samples as independent, counts it as each median's own noise
/// (docs/statistics.md). Leaving the process out of its own round's effect keeps its own noise.
std::vector<impl_samples> without_round_effects(const std::vector<const impl_samples*>& impls);

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

/// Constants of the band, power and process planning (docs/statistics.md gives the reasons).
inline constexpr double k_band_sd_factor = 2.0;       ///< band = this × the baseline's A/A sd ...
inline constexpr double k_band_ceiling_factor = 5.0;  ///< ... at most this × same_tolerance
inline constexpr double k_power_difference = 0.03;    ///< the difference the power statement is about
inline constexpr double k_target_same = 0.98;         ///< planning: P(A/A 'same') wanted (0.95 is the acceptance; the band is itself estimated)
inline constexpr double k_target_power = 0.80;        ///< planning: P(3% difference called) wanted
inline constexpr int k_max_planned_processes = 64;    ///< beyond this a `decide` line says "too small to matter"
/// From this many pooled df of process medians on, the interval is their spread alone (random
/// effects on process-level data); below it each median's bootstrap variance is a floor.
/// faster / slower always need the unadjusted floor too (docs/statistics.md).
inline constexpr int k_df_spread_trusted = 10;

/// The 'same' band of one comparison: [1 − band, 1 + band] on the speedup, and why.
struct same_band {
  double band = 0;
  double floor = 0, ceiling = 0;  ///< compare_policy.same_tolerance and k_band_ceiling_factor × it
  double aa_sd = 0;               ///< sd of the baseline's log process medians (its measured A/A spread)
  int aa_processes = 0;           ///< how many process medians that sd is from
  std::string basis;
};

/// "A 3% difference would have been detected with probability p".
struct power_statement {
  double difference = 0, probability = 0;
  std::string text;
};

struct verdict {
  int index = 0;
  verdict_kind verdict = verdict_kind::not_ranked;
  double speedup = 0, ci_low = 0, ci_high = 0;  ///< median(baseline) / median(candidate)
  int df = 0;                                   ///< degrees of freedom of the interval
  double se = 0;                                ///< standard error of log(speedup)
  std::string reason;
  std::optional<same_band> band;                ///< ranked verdicts only
  std::optional<power_statement> power;         ///< ranked verdicts only
  std::string decide;                           ///< `ambiguous`: what would decide it
};

/// Between-process variance of log(process median), pooled over implementations.
struct process_variance {
  double var = 0;    ///< σ²_b (log scale): the spread of process medians beyond their bootstrap variance
  double total = 0;  ///< the spread of process medians itself (pooled sample variance): what the interval uses
  int df = 0;        ///< Σ (processes − 1)
};

/// log(median) of each process and the bootstrap variance of each (resampling its samples).
struct process_medians {
  std::vector<double> log_median, within_var;
  /// The bootstrap variance of each median before the rounds' shared load was divided out
  /// (without_round_effects); == within_var where nothing was adjusted. faster / slower must hold
  /// against it too (build_verdicts).
  std::vector<double> raw_within_var;
};
process_medians summarize_processes(const impl_samples& s, int resamples, uint64_t seed);

process_variance pool_between_process(const std::vector<process_medians>& impls);

/// Estimate and interval of median(base)/median(cand): the mean log process median of each
/// side, variance max(total/P, Σ within/P²) per side (the measured spread of process medians,
/// the medians' bootstrap variance as a floor while pv.df < k_df_spread_trusted; raw_floor: the
/// unadjusted bootstrap variance as a floor at any df), Student-t quantile with the pooled df.
verdict estimate_speedup(const process_medians& base, const process_medians& cand, const process_variance& pv,
                         const compare_policy& p, bool raw_floor = false);

/// Verdicts for every implementation against `baseline`.
std::vector<verdict> build_verdicts(const std::vector<verdict_input>& impls, int baseline, const compare_policy& p,
                                    uint64_t seed);

/// Probabilities of each verdict for an interval of standard error `se` (log scale) with `df`
/// degrees of freedom (its estimate ~ se·sqrt(χ²_df/df)) when the true log speedup is `delta`.
struct interval_odds {
  double same = 0, slower = 0, faster = 0;
};
interval_odds interval_probabilities(double delta, double se, int df, double band, double confidence);

/// The band: clamp(k_band_sd_factor × sd of the baseline's log process medians, same_tolerance,
/// k_band_ceiling_factor × same_tolerance).
same_band choose_band(const process_medians& base, const compare_policy& p);

/// Power for a k_power_difference difference either way (the smaller of the two).
power_statement power_for(double se, int df, double band, double confidence);

/// One line for `ambiguous`: how many processes per implementation would decide it at the
/// measured per-process variances (log scale), or that a longer budget would.
std::string decide_line(double log_speedup, double var_between, double var_within, int processes, int df, double band,
                        const compare_policy& p);

/// Processes per implementation for a compare of `impls` implementations: the fewest (≥ pilot,
/// ≤ max_processes) that give P(A/A 'same') ≥ k_target_same and, while the band is the
/// configured `floor_band`, P(3% called) ≥ k_target_power, at process-median sd `sd_process`.
struct process_plan {
  int processes = 0;
  double aa_same = 0, power = 0;
  std::string why;
};
process_plan plan_processes(double sd_process, int impls, int pilot, int max_processes, double band, double floor_band,
                            double confidence);
/// The same with a per-process variance of the log median that depends on the processes per
/// implementation (`var_at(n)`; a budget shared by more processes gives each fewer samples) and
/// may be unaffordable (`var_at(n)` < 0: not a candidate). Targets unreachable: the affordable n
/// with the highest P(A/A 'same').
process_plan plan_processes(const std::function<double(int)>& var_at, int impls, int pilot, int max_processes, double band,
                            double floor_band, double confidence);

/// Sample sd of log process medians (0 with fewer than 2).
double log_sd(const std::vector<double>& log_medians);

/// Two-sided Student-t quantile: P(|T_df| <= t) = confidence. df <= 0: the normal quantile.
double t_quantile(double confidence, int df);

}  // namespace magpie::kernel
