// Request arrival schedule, as vLLM's `bench serve` builds it (serve.py, get_request): with
// rate = inf every request arrives at t = 0; otherwise each of the n requests draws a gap from a
// gamma distribution with shape `burstiness` and scale 1 / (rate · burstiness) (burstiness 1 =
// Poisson; < 1 burstier, > 1 more regular, inf = constant gaps of 1/rate), the gaps are summed,
// and the sums are rescaled so that the last arrival is at exactly n / rate. Offsets are
// seconds from the benchmark start (the first is one gap, not 0). The random draws differ from
// vLLM's (numpy); the distribution does not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace magpie::serve {

struct arrival_options {
  double request_rate = 0;  ///< requests/s; <= 0 or inf: all requests at t = 0
  double burstiness = 1.0;  ///< gamma shape (> 0; inf: constant gaps)
  uint64_t seed = 0;
};

std::vector<double> arrival_offsets(size_t n, const arrival_options& opts);

}  // namespace magpie::serve
