#include "kernel/verdict.h"

#include <algorithm>
#include <cmath>

#include "core/stats.h"
#include "core/strings.h"

namespace magpie::kernel {

namespace {

// Inverse of the standard normal CDF (Acklam's rational approximation, |error| < 1.2e-9).
double normal_quantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  const double lo = 0.02425;
  if (p < lo) {
    double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - lo) return -normal_quantile(1 - p);
  double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

double median_of(std::vector<double>& v) {
  size_t n = v.size(), m = n / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m), v.end());
  double hi = v[m];
  if (n % 2) return hi;
  return 0.5 * (hi + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m)));
}

}  // namespace

double t_quantile(double confidence, int df) {
  const double p = 0.5 + confidence / 2;  // one-sided
  const double pi = 3.14159265358979323846;
  if (df == 1) return std::tan(pi * (p - 0.5));
  if (df == 2) return (2 * p - 1) / std::sqrt(2 * p * (1 - p));
  double z = normal_quantile(p);
  if (df <= 0) return z;
  // Cornish-Fisher expansion of the t quantile in 1/df (accurate to ~1e-3 for df >= 3).
  double v = df, z2 = z * z;
  double g1 = (z2 + 1) * z / 4, g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
  double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
  double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
  return z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v);
}

std::vector<impl_samples> without_round_effects(const std::vector<const impl_samples*>& impls) {
  struct cell {
    size_t impl, proc, sample;
    double dev;
  };
  std::vector<impl_samples> out;
  std::vector<std::vector<cell>> by_round;
  for (size_t k = 0; k < impls.size(); ++k) {
    out.push_back(impls[k] ? *impls[k] : impl_samples{});
    const impl_samples& s = out.back();
    if (s.rounds.size() != s.processes.size()) continue;
    for (size_t i = 0; i < s.processes.size(); ++i) {
      const auto& v = s.processes[i];
      if (v.empty() || s.rounds[i].size() != v.size()) continue;
      std::vector<double> tmp = v;
      const double lm = std::log(std::max(median_of(tmp), 1e-9));
      for (size_t j = 0; j < v.size(); ++j) {
        const int r = s.rounds[i][j];
        if (r < 0) continue;
        if (by_round.size() <= static_cast<size_t>(r)) by_round.resize(static_cast<size_t>(r) + 1);
        by_round[static_cast<size_t>(r)].push_back({k, i, j, std::log(std::max(v[j], 1e-9)) - lm});
      }
    }
  }
  for (const auto& cells : by_round) {
    if (cells.size() < 3) continue;
    for (size_t c = 0; c < cells.size(); ++c) {
      std::vector<double> others;
      for (size_t o = 0; o < cells.size(); ++o)
        if (o != c) others.push_back(cells[o].dev);
      out[cells[c].impl].processes[cells[c].proc][cells[c].sample] *= std::exp(-median_of(others));
    }
  }
  return out;
}

process_medians summarize_processes(const impl_samples& s, int resamples, uint64_t seed) {
  process_medians pm;
  splitmix64 rng(seed);
  for (const auto& proc : s.processes) {
    if (proc.empty()) continue;
    std::vector<double> v = proc;
    pm.log_median.push_back(std::log(std::max(median_of(v), 1e-9)));
    std::vector<double> boot(static_cast<size_t>(std::max(resamples, 20)));
    std::vector<double> r(proc.size());
    for (auto& b : boot) {
      for (auto& x : r) x = proc[rng.below(proc.size())];
      b = std::log(std::max(median_of(r), 1e-9));
    }
    double m = mean(boot), acc = 0;
    for (double b : boot) acc += (b - m) * (b - m);
    pm.within_var.push_back(acc / static_cast<double>(boot.size() - 1));
  }
  pm.raw_within_var = pm.within_var;
  return pm;
}

process_variance pool_between_process(const std::vector<process_medians>& impls) {
  process_variance pv;
  double acc = 0, total = 0;
  for (const auto& pm : impls) {
    size_t p = pm.log_median.size();
    if (p < 2) continue;
    double m = mean(pm.log_median), s2 = 0;
    for (double x : pm.log_median) s2 += (x - m) * (x - m);
    s2 /= static_cast<double>(p - 1);
    // The spread of process medians includes each median's own sampling noise.
    double within = mean(pm.within_var);
    acc += std::max(0.0, s2 - within) * static_cast<double>(p - 1);
    total += s2 * static_cast<double>(p - 1);
    pv.df += static_cast<int>(p - 1);
  }
  pv.var = pv.df > 0 ? acc / pv.df : 0;
  pv.total = pv.df > 0 ? total / pv.df : 0;
  return pv;
}

verdict estimate_speedup(const process_medians& base, const process_medians& cand, const process_variance& pv,
                         const compare_policy& p, bool raw_floor) {
  auto side = [&](const process_medians& pm, double* est) {
    const double n = static_cast<double>(pm.log_median.size());
    *est = mean(pm.log_median);
    // The spread of the process medians (total) holds the between-process part and each
    // median's own noise except what the rounds share. The medians' bootstrap variance counts
    // that shared load too (100x+ the spread on the loaded VM), but it stays a floor: with two
    // processes a side, the spread alone once called an identical numpy copy `slower` (0.61x:
    // both its processes ran 2x slow on the loaded VM, a process effect two processes cannot
    // show). docs/statistics.md gives the numbers.
    double within = 0;
    for (double w : raw_floor ? pm.raw_within_var : pm.within_var) within += w;
    if (pv.df <= 0) return within / (n * n);
    // With enough processes their medians' spread is measured well enough to stand alone: it
    // already holds whatever of each median's noise is real (numpy A/A on the loaded VM: the
    // floor implied a 14.8% sd per median where 28 medians spread by 7.3%; docs/statistics.md).
    if (!raw_floor && pv.df >= k_df_spread_trusted) return pv.total / n;
    return std::max(pv.total / n, within / (n * n));
  };
  double tb = 0, tc = 0;
  double var = side(base, &tb) + side(cand, &tc);
  verdict v;
  v.df = pv.df;
  double d = tb - tc, h = t_quantile(p.confidence, pv.df) * std::sqrt(var);
  v.se = std::sqrt(var);
  v.speedup = std::exp(d);
  v.ci_low = std::exp(d - h);
  v.ci_high = std::exp(d + h);
  return v;
}

namespace {

// faster / slower: the interval at `confidence` wholly outside the band. same: equivalence by
// two one-sided tests at 1 − confidence each (Schuirmann's TOST), i.e. the interval at
// 2·confidence − 1 (90% for 95%) wholly inside the band.
verdict_kind classify(const verdict& v, double band, double confidence) {
  double lo = 1.0 - band, hi = 1.0 + band;
  if (v.ci_low > hi) return verdict_kind::faster;
  if (v.ci_high < lo) return verdict_kind::slower;
  const double d = std::log(v.speedup), h = t_quantile(2 * confidence - 1, v.df) * v.se;
  if (std::exp(d - h) >= lo && std::exp(d + h) <= hi) return verdict_kind::same;
  return verdict_kind::ambiguous;
}

}  // namespace

std::vector<verdict> build_verdicts(const std::vector<verdict_input>& impls, int baseline, const compare_policy& p,
                                    uint64_t seed) {
  std::vector<process_medians> pm(impls.size());
  std::vector<process_medians> pooled;
  std::vector<const impl_samples*> ranked(impls.size(), nullptr);
  for (size_t i = 0; i < impls.size(); ++i)
    if (impls[i].correct && impls[i].timed) ranked[i] = &impls[i].samples;
  const std::vector<impl_samples> adjusted = without_round_effects(ranked);
  for (size_t i = 0; i < impls.size(); ++i) {
    if (!ranked[i]) continue;
    const int resamples = std::min(p.bootstrap_resamples, 400);
    pm[i] = summarize_processes(impls[i].samples, resamples, seed + i);
    // The medians' own noise (the interval's floor) without the load every process shared in a
    // round, which cancels in the ratio; the unadjusted one stays the bar for faster / slower.
    if (!impls[i].samples.rounds.empty()) pm[i].within_var = summarize_processes(adjusted[i], resamples, seed + i).within_var;
    pooled.push_back(pm[i]);
  }
  process_variance pv = pool_between_process(pooled);
  const verdict_input& base = impls[static_cast<size_t>(baseline)];
  const same_band band = choose_band(pm[static_cast<size_t>(baseline)], p);
  std::vector<verdict> out;
  for (size_t i = 0; i < impls.size(); ++i) {
    const verdict_input& k = impls[i];
    verdict v;
    v.index = static_cast<int>(i);
    const bool is_base = static_cast<int>(i) == baseline;
    if (!k.correct) {
      v.verdict = verdict_kind::not_ranked;
      v.reason = "incorrect or failed: incorrect candidates are never ranked";
    } else if (!k.timed || !base.timed) {
      v.verdict = is_base ? verdict_kind::baseline : verdict_kind::not_ranked;
      v.reason = is_base ? "baseline"
                         : (!k.timed ? "not timed: " + k.not_timed_reason : "no timing for the baseline");
    } else if (is_base) {
      v.verdict = verdict_kind::baseline;
      v.speedup = v.ci_low = v.ci_high = 1.0;
    } else {
      verdict e = estimate_speedup(pm[static_cast<size_t>(baseline)], pm[i], pv, p);
      v.speedup = e.speedup;
      v.ci_low = e.ci_low;
      v.ci_high = e.ci_high;
      v.df = e.df;
      v.se = e.se;
      v.band = band;
      v.power = power_for(v.se, v.df, band.band, p.confidence);
      v.verdict = classify(v, band.band, p.confidence);
      // A difference must also stand against the medians' unadjusted bootstrap noise: with two
      // processes a side, a process persistently ~2x slow under load (heavy-tailed process
      // effects) once made an identical numpy copy `slower` 0.61x (docs/statistics.md). `same`
      // is an equivalence claim about the spread measured, and uses the adjusted floor.
      std::string held_back;
      if (v.verdict == verdict_kind::faster || v.verdict == verdict_kind::slower) {
        verdict raw = estimate_speedup(pm[static_cast<size_t>(baseline)], pm[i], pv, p, true);
        raw.speedup = v.speedup;
        raw.df = v.df;
        if (classify(raw, band.band, p.confidence) != v.verdict) {
          held_back = strprintf("; %s held back: with each median's noise taken as its samples' own (the load the "
                                "processes shared in a round counted too) the %.0f%% CI is [%.4f, %.4f]",
                                verdict_kind_name(v.verdict), p.confidence * 100, raw.ci_low, raw.ci_high);
          v.verdict = verdict_kind::ambiguous;
        }
      }
      const process_medians& pb = pm[static_cast<size_t>(baseline)];
      v.reason = strprintf("speedup %.4fx, %.0f%% CI [%.4f, %.4f] (%zu+%zu processes, between-process variance "
                           "with %d df), 'same' band ±%.1f%%",
                           v.speedup, p.confidence * 100, v.ci_low, v.ci_high, pb.log_median.size(),
                           pm[i].log_median.size(), pv.df, band.band * 100) + held_back;
      if (v.verdict == verdict_kind::ambiguous) {
        const int now = static_cast<int>(std::min(pb.log_median.size(), pm[i].log_median.size()));
        v.decide = decide_line(std::log(v.speedup), pv.var, pv.total - pv.var, now, pv.df, band.band, p);
        if (!held_back.empty())
          v.decide = strprintf("more processes per implementation (now %d): the difference is outside the band but does "
                               "not yet stand against the samples' unadjusted noise", now);
      }
      if (k.implausible) {
        v.verdict = verdict_kind::implausible;
        v.reason = strprintf("faster than the physical floor of %.2f us (bytes that must be read / peak bandwidth): "
                             "never ranked; ",
                             k.floor_ns / 1e3) + v.reason;
      } else if (!k.trusted_timer && v.verdict == verdict_kind::faster) {
        v.verdict = verdict_kind::ambiguous;
        v.decide = "a run timed outside the candidate's process (CUPTI) would decide it";
        v.reason = "timed only by a timer inside the candidate's process (no CUPTI): 'faster' is not certified; " + v.reason;
      }
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace magpie::kernel
