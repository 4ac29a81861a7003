#include "core/stats.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/subprocess.h"

namespace magpie {

uint64_t fresh_seed() {
  uint64_t s = 0;
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    if (::read(fd, &s, sizeof s) != static_cast<ssize_t>(sizeof s)) s = 0;
    ::close(fd);
  }
  if (s == 0) s = static_cast<uint64_t>(monotonic_seconds() * 1e9) ^ static_cast<uint64_t>(getpid());
  return s;
}

double percentile_sorted(const std::vector<double>& s, double p) {
  if (s.empty()) return 0.0;
  if (s.size() == 1) return s[0];
  double rank = p / 100.0 * static_cast<double>(s.size() - 1);
  auto lo = static_cast<size_t>(std::floor(rank));
  size_t hi = std::min(lo + 1, s.size() - 1);
  double frac = rank - static_cast<double>(lo);
  return s[lo] + (s[hi] - s[lo]) * frac;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return percentile_sorted(v, p);
}

double median(std::vector<double> v) { return percentile(std::move(v), 50.0); }

double mean(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double stdev(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  double m = mean(v), acc = 0;
  for (double x : v) acc += (x - m) * (x - m);
  return std::sqrt(acc / static_cast<double>(v.size() - 1));
}

sample_summary summarize(const std::vector<double>& v) {
  sample_summary s;
  s.n = v.size();
  if (v.empty()) return s;
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  s.median = percentile_sorted(sorted, 50);
  s.p25 = percentile_sorted(sorted, 25);
  s.p75 = percentile_sorted(sorted, 75);
  s.p5 = percentile_sorted(sorted, 5);
  s.p95 = percentile_sorted(sorted, 95);
  s.iqr = s.p75 - s.p25;
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean = mean(v);
  s.stdev = stdev(v);
  s.rel_stdev = s.mean != 0 ? s.stdev / s.mean : 0;
  return s;
}

uint64_t splitmix64::next() {
  uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t splitmix64::below(uint64_t n) { return n ? next() % n : 0; }

interval bootstrap_ratio_of_medians(const std::vector<double>& base, const std::vector<double>& cand,
                                    double confidence, int resamples, uint64_t seed) {
  interval out;
  if (base.empty() || cand.empty()) return out;
  splitmix64 rng(seed);
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(resamples));
  std::vector<double> a(base.size()), b(cand.size());
  for (int r = 0; r < resamples; ++r) {
    for (auto& x : a) x = base[rng.below(base.size())];
    for (auto& x : b) x = cand[rng.below(cand.size())];
    double mb = median(b);
    if (mb <= 0) continue;
    ratios.push_back(median(a) / mb);
  }
  std::sort(ratios.begin(), ratios.end());
  double tail = (1.0 - confidence) / 2.0 * 100.0;
  out.low = percentile_sorted(ratios, tail);
  out.high = percentile_sorted(ratios, 100.0 - tail);
  return out;
}

}  // namespace magpie
