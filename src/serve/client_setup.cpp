// make_client_config: from a benchmark config to the client's settings. Two sets of defaults
// for what the config leaves unset (docs/serving.md, "Defaults"):
//   Magpie (YAML, framework runs): Magpie's envs CONC 32, ISL 1024, OSL 512, RANDOM_RANGE_RATIO
//     0.5 (uniform in [L·r, L]), NUM_PROMPTS 10 × concurrency, temperature 0, 1 warm-up (CLI);
//   vLLM (`--base-url` runs, vllm bench serve's defaults): no concurrency cap, 1000 prompts,
//     random lengths 1024 / 128 with range ratio 0 (uniform in [L(1−r), L(1+r)]), temperature
//     left to the server, ignore_eos for the random dataset, 0 warm-ups (CLI).
#include <cstdlib>

#include "core/strings.h"
#include "serve/orchestrator.h"

namespace magpie::serve {

namespace {

constexpr int64_t k_vllm_num_prompts = 1000, k_vllm_input_len = 1024, k_vllm_output_len = 128;

/// Lengths and their spread: vLLM style when asked for (flags with vLLM's names, or vLLM defaults).
void set_lengths(const benchmark_config& cfg, client_config& c) {
  const client_settings& s = cfg.client;
  bool vllm_style = s.vllm_defaults || s.random_input_len > 0 || s.random_output_len > 0 || s.random_range_ratio.has_value();
  int64_t in_dflt = s.vllm_defaults ? cfg.env_int("ISL", k_vllm_input_len) : cfg.env_int("ISL", 1024);
  int64_t out_dflt = s.vllm_defaults ? cfg.env_int("OSL", k_vllm_output_len) : cfg.env_int("OSL", 512);
  c.dataset.input_len = s.random_input_len > 0 ? s.random_input_len : in_dflt;
  c.dataset.output_len = s.random_output_len > 0 ? s.random_output_len : out_dflt;
  if (c.dataset.name != "random" && s.random_output_len <= 0) c.dataset.output_len = 0;  // from the file
  if (vllm_style) {
    c.dataset.style = range_style::symmetric;
    c.dataset.range_ratio = s.random_range_ratio.value_or(0.0);
  } else {
    c.dataset.style = range_style::lower_bound;
    c.dataset.range_ratio = cfg.env_double("RANDOM_RANGE_RATIO", 0.5);
  }
}

status set_headers(const client_settings& s, client_config& c) {
  for (const auto& h : s.headers) {
    auto colon = h.find(':');
    if (colon == std::string::npos || colon == 0) return invalid_argument("header '%s' is not 'Name: value'", h.c_str());
    c.headers.emplace_back(std::string(trim(h.substr(0, colon))), std::string(trim(h.substr(colon + 1))));
  }
  if (const char* key = std::getenv("OPENAI_API_KEY"); key && *key) c.headers.emplace_back("Authorization", std::string("Bearer ") + key);
  return ok_status();
}

}  // namespace

status_or<client_config> make_client_config(const benchmark_config& cfg, const endpoint_url& url) {
  const client_settings& s = cfg.client;
  bool vllm = s.vllm_defaults;
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
  set_lengths(cfg, c);
  int64_t conc = cfg.env_int("CONC", vllm ? 0 : 32);
  c.max_concurrency = s.max_concurrency >= 0 ? s.max_concurrency : conc;
  int64_t n_dflt = vllm ? k_vllm_num_prompts : (c.max_concurrency > 0 ? c.max_concurrency : conc) * 10;
  int64_t n = s.num_prompts > 0 ? s.num_prompts : cfg.env_int("NUM_PROMPTS", n_dflt);
  if (n < 1) return invalid_argument("num_prompts must be >= 1");
  c.dataset.num_prompts = static_cast<size_t>(n);
  c.arrivals.request_rate = s.request_rate;
  c.arrivals.burstiness = s.burstiness;
  c.arrivals.seed = s.seed;
  c.num_warmups = s.num_warmups;
  // vLLM sets ignore_eos for the random dataset so that every request generates its length.
  c.ignore_eos = s.ignore_eos || (vllm && c.dataset.name == "random");
  c.continuous_usage = s.continuous_usage;
  c.temperature = s.temperature.has_value() ? s.temperature : (vllm ? std::nullopt : std::optional<double>(0.0));
  c.label = s.label;
  c.kernel_timestamps = s.kernel_timestamps;
  c.limits.request_timeout_s = s.request_timeout_s;
  c.limits.max_event_bytes = s.max_event_bytes;
  c.limits.max_response_bytes = s.max_response_bytes;
  c.keep_text = s.keep_generated_text;
  c.metrics.percentiles = s.percentiles;
  c.metrics.percentile_metrics = s.percentile_metrics;
  MAGPIE_ASSIGN_OR_RETURN(c.metrics.goodput_slo_ms, parse_goodput(s.goodput));
  c.metrics.requested_rate = s.request_rate;
  c.metrics.burstiness = s.burstiness;
  c.metrics.max_concurrency = c.max_concurrency;
  MAGPIE_RETURN_IF_ERROR(set_headers(s, c));
  return c;
}

}  // namespace magpie::serve
