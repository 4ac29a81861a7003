#include "serve/schedule.h"

#include <cmath>
#include <random>

namespace magpie::serve {

std::vector<double> arrival_offsets(size_t n, const arrival_options& o) {
  std::vector<double> out(n, 0.0);
  if (!(o.request_rate > 0) || std::isinf(o.request_rate) || n == 0) return out;
  double shape = o.burstiness > 0 ? o.burstiness : 1.0;
  std::mt19937_64 rng(o.seed);
  std::gamma_distribution<double> gap(std::isinf(shape) ? 1.0 : shape, std::isinf(shape) ? 1.0 : 1.0 / (o.request_rate * shape));
  double t = 0;
  for (size_t i = 0; i < n; ++i) {
    t += std::isinf(shape) ? 1.0 / o.request_rate : gap(rng);
    out[i] = t;
  }
  if (t > 0) {
    double scale = (static_cast<double>(n) / o.request_rate) / t;  // the last arrival at exactly n / rate
    for (double& x : out) x *= scale;
  }
  return out;
}

}  // namespace magpie::serve
