#include "optimize/measure_printer.h"

namespace magpie::optimize {

json metrics_json(const run_metrics& m) {
  json j = json::object();
  for (const char* k : {"output_throughput", "request_throughput", "total_token_throughput", "completed", "failed",
                        "duration_s", "tpot_mean_ms", "tpot_median_ms", "ttft_mean_ms", "itl_mean_ms", "e2el_mean_ms"}) {
    auto it = m.find(k);
    j[k] = it == m.end() ? json(nullptr) : json_finite(it->second);
  }
  return j;
}

}  // namespace magpie::optimize
