// Request arrival schedule: all at once (rate = inf) or gamma-distributed gaps with mean
// 1/rate and shape `burstiness` (1 = Poisson; < 1 burstier, > 1 more regular), as vLLM's
// `bench serve` does. Offsets are seconds from the benchmark start; the first is 0.
#pragma once

#include <cstdint>
#include <vector>

namespace magpie::serve {

struct arrival_options {
  double request_rate = 0;  ///< requests/s; <= 0 or inf: all requests at t = 0
  double burstiness = 1.0;  ///< gamma shape (> 0)
  uint64_t seed = 0;
};

std::vector<double> arrival_offsets(size_t n, const arrival_options& opts);

}  // namespace magpie::serve
