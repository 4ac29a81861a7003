// Noise tests (see noise.h). The incomplete beta function uses the Numerical-Recipes style
// modified Lentz continued fraction.
#include "store/noise.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/stats.h"
#include "core/strings.h"

namespace magpie::store {
namespace {

double beta_cf(double a, double b, double x) {
  const double tiny = 1e-300;
  double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    int m2 = 2 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < 1e-15) break;
  }
  return h;
}

/// Regularised incomplete beta I_x(a, b).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  double lbt = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  double bt = std::exp(lbt);
  if (x < (a + 1) / (a + b + 2)) return bt * beta_cf(a, b, x) / a;
  return 1 - bt * beta_cf(b, a, 1 - x) / b;
}

double variance(const std::vector<double>& v) {
  double s = stdev(v);
  return s * s;
}

}  // namespace

double student_t_cdf(double t, double df) {
  if (!(df > 0)) return std::numeric_limits<double>::quiet_NaN();
  double x = df / (df + t * t);
  double tail = 0.5 * incomplete_beta(df / 2, 0.5, x);  // P(T > |t|)
  return t >= 0 ? 1 - tail : tail;
}

double student_t_critical(double alpha, double df) {
  double target = 1 - alpha / 2, lo = 0, hi = 1e6;
  for (int i = 0; i < 200; ++i) {
    double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

noise_test compare_replicates(const std::vector<double>& a, const std::vector<double>& b, double alpha) {
  noise_test r;
  r.method = "none";
  if (a.empty() || b.empty()) return r;
  double ma = mean(a), mb = mean(b);
  r.ratio = ma != 0 ? mb / ma : 0;
  r.ratio_low = r.ratio_high = r.ratio;
  double se = 0;
  if (a.size() >= 2 && b.size() >= 2) {
    double va = variance(a) / a.size(), vb = variance(b) / b.size();
    se = std::sqrt(va + vb);
    r.method = "welch_t";
    r.df = (va + vb) * (va + vb) /
           (va * va / (a.size() - 1) + vb * vb / (b.size() - 1));
    if (!(r.df > 0) || !std::isfinite(r.df)) r.df = static_cast<double>(a.size() + b.size() - 2);
  } else if (a.size() >= 2 || b.size() >= 2) {
    const auto& rep = a.size() >= 2 ? a : b;  // single value vs the other side's prediction interval
    se = stdev(rep) * std::sqrt(1.0 + 1.0 / rep.size());
    r.method = "prediction_interval";
    r.df = static_cast<double>(rep.size() - 1);
  } else {
    return r;  // one run per side: run-to-run noise unknown
  }
  r.tested = true;
  double diff = mb - ma;
  if (se <= 0) {
    r.p_value = diff == 0 ? 1.0 : 0.0;
  } else {
    double t = diff / se;
    r.p_value = 2 * (1 - student_t_cdf(std::fabs(t), r.df));
    double half = student_t_critical(alpha, r.df) * se;
    if (ma != 0) {
      r.ratio_low = (mb - half) / ma;  // approximate: CI of the difference scaled by mean(a)
      r.ratio_high = (mb + half) / ma;
      if (r.ratio_low > r.ratio_high) std::swap(r.ratio_low, r.ratio_high);
    }
  }
  r.significant = r.p_value < alpha;
  return r;
}

std::string statistic_of_metric(const std::string& m) {
  size_t dot = m.rfind('.');
  std::string key = dot == std::string::npos ? m : m.substr(dot + 1);
  if (ends_with(key, "_ms")) key.resize(key.size() - 3);
  if (key == "mean" || key == "median") return key;
  if (key.size() > 1 && key[0] == 'p' && parse_double(key.substr(1))) return key;
  return "";
}

double evaluate_statistic(const std::vector<double>& v, const std::string& s) {
  if (s == "mean") return mean(v);
  if (s == "median") return median(v);
  if (s.size() > 1 && s[0] == 'p') return percentile(v, parse_double(s.substr(1)).value_or(50));
  return std::numeric_limits<double>::quiet_NaN();
}

noise_test compare_samples(const std::vector<double>& a, const std::vector<double>& b, const std::string& statistic,
                           double alpha, int resamples, uint64_t seed) {
  noise_test r;
  r.method = "none";
  if (a.size() < 2 || b.size() < 2 || statistic.empty()) return r;
  double sa = evaluate_statistic(a, statistic), sb = evaluate_statistic(b, statistic);
  if (!(sa > 0)) return r;
  r.method = "bootstrap_within_run";
  r.tested = true;
  r.p_value = std::numeric_limits<double>::quiet_NaN();
  r.ratio = sb / sa;
  splitmix64 rng(seed);
  std::vector<double> ratios, ra(a.size()), rb(b.size());
  for (int i = 0; i < resamples; ++i) {
    for (auto& x : ra) x = a[rng.below(a.size())];
    for (auto& x : rb) x = b[rng.below(b.size())];
    double va = evaluate_statistic(ra, statistic);
    if (va > 0) ratios.push_back(evaluate_statistic(rb, statistic) / va);
  }
  std::sort(ratios.begin(), ratios.end());
  r.ratio_low = percentile_sorted(ratios, alpha / 2 * 100);
  r.ratio_high = percentile_sorted(ratios, 100 - alpha / 2 * 100);
  r.significant = r.ratio_low > 1 || r.ratio_high < 1;
  return r;
}

}  // namespace magpie::store
