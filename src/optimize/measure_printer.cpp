#include "optimize/measure_printer.h"

#include "optimize/decide_printer.h"

namespace magpie::optimize {

json variant_server_json(const variant_server& s) {
  return {{"tag", s.tag()},          {"variant", s.variant()},   {"url", s.url()},
          {"argv", s.argv()},        {"log", s.log_path().string()}, {"ready_s", s.ready_s()},
          {"info", s.info()},        {"exit", s.exit_text().empty() ? json(nullptr) : json(s.exit_text())}};
}

json metrics_json(const run_metrics& m) {
  json j = json::object();
  for (const char* k : {"output_throughput", "request_throughput", "total_token_throughput", "completed", "failed",
                        "duration_s", "tpot_mean_ms", "tpot_median_ms", "ttft_mean_ms", "itl_mean_ms", "e2el_mean_ms"}) {
    auto it = m.find(k);
    j[k] = it == m.end() ? json(nullptr) : json_finite(it->second);
  }
  return j;
}

json bench_result_json(const bench_result& r) {
  return {{"workspace", r.workspace.string()}, {"url", r.url}, {"server", r.server_tag}, {"metrics", metrics_json(r.metrics)},
          {"fingerprint", r.fp.total}, {"fingerprint_parts", fingerprint_json(r.fp)["parts"]}};
}

}  // namespace magpie::optimize
