#include "serve/dry_run_printer.h"

#include <string>

#include "serve/bench_config_codec.h"
#include "serve/server_plan_printer.h"

namespace magpie::serve {

json dry_run_plan_json(const dry_run_plan& p) {
  json j;
  if (p.server) j["server"] = server_plan_json(*p.server);
  const client_config& cc = p.client;
  j["client"] = {{"url", cc.url.to_string()}, {"endpoint", cc.endpoint}, {"model", cc.model}, {"dataset", cc.dataset.name},
                 {"num_prompts", cc.dataset.num_prompts}, {"input_len", cc.dataset.input_len}, {"output_len", cc.dataset.output_len},
                 {"range_ratio", cc.dataset.range_ratio},
                 {"range_style", cc.dataset.style == range_style::symmetric ? "symmetric" : "lower_bound"},
                 {"max_concurrency", cc.max_concurrency}, {"request_rate", cc.arrivals.request_rate > 0 ? json(cc.arrivals.request_rate) : json("inf")},
                 {"burstiness", cc.arrivals.burstiness}, {"num_warmups", cc.num_warmups}};
  auto limit = [](double v, const char* dflt) { return v < 0 ? json(std::string("auto: ") + dflt) : json(v); };
  j["client"]["limits"] = {
      {"request_timeout_s", limit(cc.limits.request_timeout_s, "60 s + 0.5 s x max_tokens + 0.002 s x prompt tokens")},
      {"max_event_bytes", limit(static_cast<double>(cc.limits.max_event_bytes), "4 MiB + 256 B x prompt tokens")},
      {"max_response_bytes", limit(static_cast<double>(cc.limits.max_response_bytes), "max_event_bytes + 16 KiB x max_tokens")},
      {"keep_generated_text", cc.keep_text}};
  j["config"] = benchmark_config_json(p.config);
  j["run_kind"] = p.config.effective_run_kind();
  return j;
}

}  // namespace magpie::serve
