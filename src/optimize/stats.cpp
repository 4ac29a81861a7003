// End-to-end statistics (Welch, smallest detectable change), input fingerprints, the final
// decision and the kernel gain's prediction.
#include <algorithm>
#include <cmath>

#include "core/stats.h"
#include "core/strings.h"
#include "optimize/decide.h"
#include "optimize/decide_codec.h"
#include "optimize/decide_printer.h"
#include "serve/sha256.h"
#include "store/noise.h"

namespace magpie::optimize {

const std::vector<std::string> k_e2e_metrics = {"output_throughput", "request_throughput", "total_token_throughput",
                                                "tpot_mean_ms",      "tpot_median_ms",     "ttft_mean_ms",
                                                "itl_mean_ms",       "e2el_mean_ms"};

bool higher_is_better(const std::string& m) { return ends_with(m, "throughput"); }

fingerprint make_fingerprint(const json& workload, const json& request_lens, const json& model) {
  fingerprint f;
  f.parts["workload"] = serve::sha256_hex(dump_compact(workload)).substr(0, 16);
  f.parts["requests"] = serve::sha256_hex(dump_compact(request_lens)).substr(0, 16);
  f.parts["model"] = serve::sha256_hex(dump_compact(model)).substr(0, 16);
  json all = json::object();
  for (const auto& [k, v] : f.parts) all[k] = v;
  f.total = serve::sha256_hex(dump_compact(all));
  return f;
}

std::optional<stop_reason> check_inputs(const std::vector<fingerprint>& before, const std::vector<fingerprint>& after) {
  if (before.empty()) return std::nullopt;
  const fingerprint& ref = before.front();
  for (int side = 0; side < 2; ++side) {
    const auto& runs = side == 0 ? before : after;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (runs[i].total == ref.total) continue;
      std::vector<std::string> diff;
      for (const auto& [k, v] : runs[i].parts)
        if (ref.parts.count(k) == 0 || ref.parts.at(k) != v) diff.push_back(k);
      return stop_reason{"inputs_changed",
                         strprintf("%s run %zu differs from baseline run 0 in: %s", side == 0 ? "baseline" : "after", i,
                                   join(diff, ", ").c_str()),
                         {{"expected", fingerprint_json(ref)}, {"got", fingerprint_json(runs[i])}}};
    }
  }
  return std::nullopt;
}

welch_result welch(const std::vector<double>& a, const std::vector<double>& b) {
  welch_result r;
  if (a.size() < 2 || b.size() < 2) return r;
  double ma = mean(a), mb = mean(b), sa = stdev(a), sb = stdev(b);
  double va = sa * sa / static_cast<double>(a.size()), vb = sb * sb / static_cast<double>(b.size());
  if (va + vb == 0) {
    r.df = static_cast<double>(a.size() + b.size() - 2);
    r.p = ma == mb ? 1.0 : 0.0;
    return r;
  }
  r.t = (mb - ma) / std::sqrt(va + vb);
  double den = va * va / static_cast<double>(a.size() - 1) + vb * vb / static_cast<double>(b.size() - 1);
  r.df = den > 0 ? (va + vb) * (va + vb) / den : static_cast<double>(a.size() + b.size() - 2);
  r.p = 2.0 * (1.0 - store::student_t_cdf(std::fabs(r.t), r.df));
  r.p = std::clamp(r.p, 0.0, 1.0);
  return r;
}

double minimum_detectable_change_pct(const std::vector<double>& a, const std::vector<double>& b, double alpha, double power) {
  if (a.size() < 2 || b.size() < 2) return 0;
  double ma = mean(a);
  if (ma == 0) return 0;
  double sa = stdev(a), sb = stdev(b);
  double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  double pooled = std::sqrt(((na - 1) * sa * sa + (nb - 1) * sb * sb) / (na + nb - 2));
  double df = na + nb - 2;
  // Two-sided test at alpha; the power quantile is the one-sided t at `power`, i.e. the
  // two-sided critical value at 2·(1 − power).
  double t_alpha = store::student_t_critical(alpha, df);
  double t_power = store::student_t_critical(2.0 * (1.0 - power), df);
  return (t_alpha + t_power) * pooled * std::sqrt(1.0 / na + 1.0 / nb) / std::fabs(ma) * 100.0;
}

std::map<std::string, metric_change> e2e_change(const std::vector<run_metrics>& before, const std::vector<run_metrics>& after,
                                                double alpha, double power) {
  std::map<std::string, metric_change> out;
  auto values = [](const std::vector<run_metrics>& runs, const std::string& name) {
    std::vector<double> v;
    for (const auto& r : runs)
      if (auto it = r.find(name); it != r.end()) v.push_back(it->second);
    return v;
  };
  for (const auto& name : k_e2e_metrics) {
    std::vector<double> a = values(before, name), b = values(after, name);
    metric_change c;
    c.n_before = a.size();
    c.n_after = b.size();
    if (a.size() < 2 || b.size() < 2) {
      out[name] = c;
      continue;
    }
    c.tested = true;
    c.before_mean = mean(a), c.before_std = stdev(a);
    c.before_min = *std::min_element(a.begin(), a.end()), c.before_max = *std::max_element(a.begin(), a.end());
    c.before_spread_pct = c.before_mean != 0 ? (c.before_max - c.before_min) / c.before_mean * 100.0 : 0;
    c.after_mean = mean(b), c.after_std = stdev(b);
    c.after_min = *std::min_element(b.begin(), b.end()), c.after_max = *std::max_element(b.begin(), b.end());
    c.change_pct = c.before_mean != 0 ? (c.after_mean - c.before_mean) / c.before_mean * 100.0 : 0;
    welch_result w = welch(a, b);
    c.welch_t = w.t, c.welch_df = w.df, c.p_value = w.p;
    c.beyond_noise = w.p < alpha;
    if (c.after_mean != c.before_mean) c.better = (c.after_mean > c.before_mean) == higher_is_better(name);
    c.mde_pct = minimum_detectable_change_pct(a, b, alpha, power);
    out[name] = c;
  }
  return out;
}

std::variant<std::string, stop_reason> e2e_decision(const std::map<std::string, metric_change>& change,
                                                    const std::vector<std::string>& metrics,
                                                    const std::map<std::string, external_verdict>& theirs) {
  json detail = json::object();
  std::vector<std::string> within, disagree;
  for (const auto& m : metrics) {
    auto it = change.find(m);
    if (it == change.end() || !it->second.tested)
      return stop_reason{"e2e_within_noise", m + " could not be tested (fewer than 2 runs a side)", {{"metric", m}}};
    const metric_change& c = it->second;
    json d = {{"ours", metric_change_json(c)}};
    std::optional<bool> other;
    if (auto t = theirs.find(m); t != theirs.end()) {
      d["magpie_results_compare"] = external_verdict_json(t->second);
      other = t->second.beyond_noise;
    }
    detail[m] = d;
    if (other && *other != c.beyond_noise)
      disagree.push_back(strprintf("%s %+.2f%%: Welch p=%.3g says %s, magpie results compare says %s", m.c_str(), c.change_pct,
                                   c.p_value, c.beyond_noise ? "beyond noise" : "within noise",
                                   *other ? "beyond noise" : "within noise"));
    else if (c.beyond_noise && c.better == std::optional<bool>(false))
      return stop_reason{"e2e_regression",
                         strprintf("%s %+.2f%% is a regression beyond noise (Welch p=%.3g)", m.c_str(), c.change_pct, c.p_value),
                         detail};
    else if (!c.beyond_noise)
      within.push_back(strprintf("%s %+.2f%% is within run-to-run noise (Welch p=%.3g, smallest detectable change %.2f%%, baseline spread %.2f%%)",
                                 m.c_str(), c.change_pct, c.p_value, c.mde_pct, c.before_spread_pct));
  }
  // A metric measured as worse beyond noise is a regression even when another improved.
  if (!disagree.empty()) return stop_reason{"e2e_within_noise", join(disagree, "; "), detail};
  if (!within.empty()) return stop_reason{"e2e_within_noise", join(within, "; "), detail};
  return std::string("improved");
}

kernel_prediction predict_kernel_gain(double share_pct, double speedup, double ci_low, double ci_high) {
  auto saved = [&](double s) { return s > 0 ? share_pct / 100.0 * (1.0 - 1.0 / s) : 0.0; };
  auto thr = [&](double s) { return saved(s) < 1 ? (1.0 / (1.0 - saved(s)) - 1.0) * 100.0 : 0.0; };
  kernel_prediction p;
  p.op_share_pct = share_pct;
  p.speedup = speedup;
  p.speedup_ci = {ci_low, ci_high};
  p.gpu_time_change_pct = -saved(speedup) * 100.0;
  p.gpu_time_change_pct_ci = {-saved(ci_high) * 100.0, -saved(ci_low) * 100.0};
  p.throughput_change_pct = thr(speedup);
  p.throughput_change_pct_ci = {thr(ci_low), thr(ci_high)};
  return p;
}

}  // namespace magpie::optimize
