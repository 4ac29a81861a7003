#include "kernel/compare.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"

namespace magpie::kernel {

bool ranks(const verdict& v) {
  return v.verdict != verdict_kind::not_ranked && v.verdict != verdict_kind::implausible && v.speedup > 0;
}

compare_result build_compare_result(std::vector<compare_kernel> kernels, int baseline) {
  compare_result r;
  r.kernels = std::move(kernels);
  r.baseline = baseline;
  for (const auto& k : r.kernels)
    if (ranks(k.v)) r.rankings.emplace_back(k.v.index, k.v.speedup);
  std::stable_sort(r.rankings.begin(), r.rankings.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  auto at = [&](int i) -> const compare_kernel& { return r.kernels[static_cast<size_t>(i)]; };
  // A kernel whose measurement an integrity check rejected never wins (its time is not known);
  // with the baseline rejected nothing is ranked against it, so nothing wins.
  const bool base_ok = baseline >= 0 && static_cast<size_t>(baseline) < r.kernels.size() && at(baseline).correct;
  if (base_ok && at(baseline).rejected) {
    r.winner_reason = "none: the baseline's measurement was rejected by an integrity check, so nothing is ranked against it";
    return r;
  }
  for (const auto& [idx, speedup] : r.rankings)
    if (at(idx).v.verdict == verdict_kind::faster && at(idx).correct && !at(idx).rejected) {
      r.winner = idx;
      r.winner_reason = "fastest candidate that is significantly faster than the baseline";
      break;
    }
  if (r.winner < 0 && base_ok) {
    r.winner = baseline;
    r.winner_reason = "no correct candidate is significantly faster than the baseline";
  }
  for (size_t i = 0; i < r.kernels.size() && r.winner < 0; ++i)
    if (r.kernels[i].correct && !r.kernels[i].rejected) {
      r.winner = static_cast<int>(i);
      r.winner_reason = "first correct kernel (the baseline is not correct and nothing was ranked faster)";
    }
  if (r.winner >= 0 && at(r.winner).exit_code_only)
    r.winner_reason += "; correct by its own testcase's exit code only: numerical correctness is not proven";
  return r;
}

namespace {

/// "12.30 us" for a median in ns; "-" when not timed (ASCII: printf pads bytes).
/// The noise column, in percent: at most 6 characters so that the 7-wide column keeps its separator
/// (a loaded machine gave 104.29%, which ran into the median).
std::string noise_cell(double pct) {
  if (pct < 99.995) return strprintf("%.2f%%", pct);
  if (pct < 999.95) return strprintf("%.1f%%", pct);
  return strprintf("%.0f%%", pct);
}

std::string time_cell(double ns) {
  if (!(ns > 0)) return "-";
  if (ns < 1e3) return strprintf("%.1f ns", ns);
  if (ns < 1e6) return strprintf("%.2f us", ns / 1e3);
  if (ns < 1e9) return strprintf("%.2f ms", ns / 1e6);
  return strprintf("%.2f s", ns / 1e9);
}

std::string verdict_cell(const compare_kernel& k) {
  const verdict& v = k.v;
  std::string s;
  if (v.verdict == verdict_kind::baseline) s = "baseline";
  else if (v.verdict == verdict_kind::not_ranked) s = "not ranked: " + k.not_ranked_why;
  else if (v.verdict == verdict_kind::implausible) s = strprintf("implausible: %.3fx, below the physical floor", v.speedup);
  else s = strprintf("%s %.3fx (CI %.3f-%.3f)", verdict_kind_name(v.verdict), v.speedup, v.ci_low, v.ci_high);
  if (k.correct && k.exit_code_only) s += " (exit code only)";
  if (k.expect_incorrect) s += k.correct ? " (UNEXPECTED: its YAML says expect: incorrect)" : " (as expected: wrong on purpose)";
  return s;
}

}  // namespace

std::string compare_result::summary() const {
  int correct = 0, by_exit_code = 0, expected_wrong = 0;
  for (const auto& k : kernels) {
    correct += k.correct;
    by_exit_code += k.correct && k.exit_code_only;
    expected_wrong += !k.correct && k.expect_incorrect;
  }
  std::string s = strprintf("Compared %zu kernel implementations\n\nCorrectness: %d/%zu passed", kernels.size(), correct,
                            kernels.size());
  if (by_exit_code > 0) s += strprintf(" (%d by exit code only: not proven)", by_exit_code);
  if (expected_wrong > 0) s += strprintf(" (%d incorrect on purpose, as its YAML expects)", expected_wrong);
  // nvbench-like table: what people read first, per implementation.
  size_t id_w = 6;
  for (const auto& k : kernels) id_w = std::max(id_w, std::min<size_t>(40, k.id.size()));
  s += "\n\nResults (speedup = median(baseline) / median(kernel); noise = relative stdev of the samples):\n";
  s += strprintf("     # %-*s %11s %7s %8s  %s\n", static_cast<int>(id_w), "kernel", "median", "noise", "samples", "verdict");
  for (size_t i = 0; i < kernels.size(); ++i) {
    const compare_kernel& k = kernels[i];
    std::string id = k.id.size() > id_w ? k.id.substr(0, id_w - 3) + "..." : k.id;
    std::string noise = std::isfinite(k.noise) && k.median_ns > 0 ? noise_cell(k.noise * 100) : "-";
    std::string samples = k.samples > 0 && k.median_ns > 0 ? std::to_string(k.samples) : "-";
    s += strprintf("  %s %2zu %-*s %11s %7s %8s  %s%s\n", k.correct && !k.rejected ? "\u2713" : "\u2717", i,
                   static_cast<int>(id_w), id.c_str(), time_cell(k.median_ns).c_str(), noise.c_str(), samples.c_str(),
                   verdict_cell(k).c_str(), k.note.c_str());
    if (!k.detail.empty()) s += "      " + k.detail + "\n";
  }
  if (winner >= 0) s += strprintf("\nWinner: Kernel %d (%s)\n", winner, kernels[static_cast<size_t>(winner)].id.c_str());
  else if (starts_with(winner_reason, "none: ")) s += "\nWinner: " + winner_reason + "\n";
  else s += "\nWinner: none (no correct kernel)\n";
  return s;
}

verdict verdict_of(const verdict_record& r) {
  verdict v;
  v.index = r.index;
  v.verdict = r.verdict;
  v.speedup = r.speedup.value_or(0);
  v.ci_low = r.ci_low.value_or(0);
  v.ci_high = r.ci_high.value_or(0);
  v.df = r.df;
  v.reason = r.reason;
  v.decide = r.decide;
  if (r.same_band)
    v.band = same_band{r.same_band->band, r.same_band->floor, r.same_band->ceiling, r.same_band->aa_sd,
                       r.same_band->aa_processes, r.same_band->basis};
  if (r.power) v.power = power_statement{r.power->difference, r.power->probability, r.power->statement};
  return v;
}

}  // namespace magpie::kernel
