// make_client_config: from a benchmark config to the client's settings.
#include <cstdlib>

#include "core/strings.h"
#include "serve/orchestrator.h"

namespace magpie::serve {

status_or<client_config> make_client_config(const benchmark_config& cfg, const endpoint_url& url) {
  const client_settings& s = cfg.client;
  client_config c;
  c.url = url;
  c.endpoint = s.endpoint;
  c.model = s.served_model_name;
  bool chat = contains(s.endpoint, "chat/completions");
  c.dataset.name = s.dataset_name;
  c.dataset.path = s.dataset_path;
  c.dataset.token_ids = !chat;
  c.dataset.vocab_size = s.vocab_size;
  c.dataset.seed = s.seed;
  bool vllm_style = s.random_input_len > 0 || s.random_output_len > 0 || s.random_range_ratio.has_value();
  c.dataset.input_len = s.random_input_len > 0 ? s.random_input_len : cfg.env_int("ISL", 1024);
  c.dataset.output_len = s.random_output_len > 0 ? s.random_output_len : cfg.env_int("OSL", 512);
  if (c.dataset.name != "random" && s.random_output_len <= 0) c.dataset.output_len = 0;  // from the file
  if (vllm_style) {
    c.dataset.style = range_style::symmetric;
    c.dataset.range_ratio = s.random_range_ratio.value_or(0.0);
  } else {
    c.dataset.style = range_style::lower_bound;
    c.dataset.range_ratio = cfg.env_double("RANDOM_RANGE_RATIO", 0.5);
  }
  int64_t conc = cfg.env_int("CONC", 32);
  c.max_concurrency = s.max_concurrency >= 0 ? s.max_concurrency : conc;
  int64_t n = s.num_prompts > 0 ? s.num_prompts : cfg.env_int("NUM_PROMPTS", (c.max_concurrency > 0 ? c.max_concurrency : conc) * 10);
  if (n < 1) return invalid_argument("num_prompts must be >= 1");
  c.dataset.num_prompts = static_cast<size_t>(n);
  c.arrivals.request_rate = s.request_rate;
  c.arrivals.burstiness = s.burstiness;
  c.arrivals.seed = s.seed;
  c.num_warmups = s.num_warmups;
  c.ignore_eos = s.ignore_eos;
  c.continuous_usage = s.continuous_usage;
  c.request_timeout_s = s.request_timeout_s;
  c.metrics.percentiles = s.percentiles;
  MAGPIE_ASSIGN_OR_RETURN(c.metrics.goodput_slo_ms, parse_goodput(s.goodput));
  c.metrics.requested_rate = s.request_rate;
  c.metrics.burstiness = s.burstiness;
  c.metrics.max_concurrency = c.max_concurrency;
  for (const auto& h : s.headers) {
    auto colon = h.find(':');
    if (colon == std::string::npos || colon == 0) return invalid_argument("header '%s' is not 'Name: value'", h.c_str());
    c.headers.emplace_back(std::string(trim(h.substr(0, colon))), std::string(trim(h.substr(colon + 1))));
  }
  if (const char* key = std::getenv("OPENAI_API_KEY"); key && *key) c.headers.emplace_back("Authorization", std::string("Bearer ") + key);
  return c;
}

}  // namespace magpie::serve
