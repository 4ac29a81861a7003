#include "serve/schedule.h"

#include <cmath>
#include <random>

namespace magpie::serve {

std::vector<double> arrival_offsets(size_t n, const arrival_options& o) {
  std::vector<double> out(n, 0.0);
  if (!(o.request_rate > 0) || std::isinf(o.request_rate) || n == 0) return out;
  double shape = o.burstiness > 0 ? o.burstiness : 1.0;
  std::mt19937_64 rng(o.seed);
  std::gamma_distribution<double> gap(shape, 1.0 / (o.request_rate * shape));
  double t = 0;
  for (size_t i = 1; i < n; ++i) {
    t += gap(rng);
    out[i] = t;
  }
  return out;
}

}  // namespace magpie::serve
