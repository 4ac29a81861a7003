// Serving metrics from request records. Definitions (also written into every result JSON by
// metric_definitions()):
//   ttft      first content delivery − request start (client queueing excluded)
//   tpot      per request with > 1 output token: (last delivery − first delivery) / (tokens − 1)
//   itl       gaps between successive content deliveries of a request, pooled (vLLM's ITL,
//             AIPerf's inter-chunk latency)
//   itl_token per-token gaps: each delivery gap divided by the tokens it carried (usage deltas),
//             repeated once per token; only for requests whose server reported per-chunk usage
//   e2el      end of response − request start
//   queue     request start − scheduled arrival (client-side queueing: concurrency cap, lag)
//   e2el_incl_queue  end of response − scheduled arrival
//   duration  benchmark start (schedule origin) → last response end
// Latency distributions cover completed requests (queue: every request sent); std is the
// population standard deviation and percentiles interpolate linearly (numpy's default).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/status.h"
#include "serve/request.h"

namespace magpie::serve {

struct distribution {
  size_t n = 0;
  double mean = 0, median = 0, std = 0, min = 0, max = 0;  ///< milliseconds
  std::vector<std::pair<double, double>> percentiles;       ///< (p, value ms)
};

struct metric_options {
  std::vector<double> percentiles = {50, 90, 95, 99};
  std::map<std::string, double> goodput_slo_ms;  ///< keys ttft, tpot, e2el
  double requested_rate = 0;                     ///< requests/s; <= 0: inf
  double burstiness = 1.0;
  int64_t max_concurrency = 0;                   ///< 0: unlimited
};

struct serving_metrics {
  double duration_s = 0;
  size_t num_requests = 0, completed = 0, failed = 0;
  int64_t total_input_tokens = 0, total_output_tokens = 0;
  double request_throughput = 0, request_goodput = 0, output_throughput = 0, total_token_throughput = 0;
  double max_output_tokens_per_s = 0;  ///< peak over 1-s buckets from the benchmark start
  int64_t max_concurrent_requests = 0; ///< peak requests in flight (start..end)
  double mean_concurrency = 0;         ///< Σ (end − start) / duration (Little's law)
  double achieved_request_rate = 0;    ///< (sent − 1) / (last start − first start); 0 if < 2 sent
  double scheduled_request_rate = 0;   ///< the same over the schedule
  size_t good_requests = 0;
  bool goodput_configured = false;     ///< --goodput SLOs were given
  std::string input_tokens_source;     ///< "usage" | "dataset" | "mixed"
  std::string output_tokens_source;    ///< "usage" | "usage_deltas" | "chunks" | "mixed"
  size_t role_only_chunks = 0, coalesced_events = 0, requests_with_token_deltas = 0;
  distribution ttft, tpot, itl, itl_token, e2el, queue, e2el_incl_queue;
  std::vector<int64_t> input_lens, output_lens;  ///< per measured request (0 output when failed)
};

/// Parses "ttft:500 tpot:50 e2el:3000" items (ms) into SLOs.
status_or<std::map<std::string, double>> parse_goodput(const std::vector<std::string>& items);

/// Metrics over the non-warm-up records; t0_ns is the schedule origin.
serving_metrics compute_metrics(const std::vector<request_record>& records, int64_t t0_ns, const metric_options& opts);

/// The definitions above as a JSON object (metric name → text).
json metric_definitions();

/// "99" for 99.0, "99.9" for 99.9 (vLLM's key spelling: p99_ttft_ms, p99.9_ttft_ms).
std::string percentile_label(double p);

struct run_info {
  std::string backend = "openai";  ///< openai | openai-chat
  std::string model_id, base_url, endpoint, dataset_name, date;
  size_t num_prompts = 0;
};

/// A result JSON with the keys of vLLM's `bench serve --save-result` (duration, completed,
/// failed, *_throughput, mean_/median_/std_/pNN_<metric>_ms, per-request arrays in seconds:
/// ttfts, itls, start_times, queue_times, latencies; input_lens, output_lens, errors) plus
/// ours (metric_definitions, itl_token, queue and e2el_incl_queue stats, achieved rates).
json vllm_result_json(const serving_metrics& m, const std::vector<request_record>& records, int64_t t0_ns,
                      const metric_options& opts, const run_info& info);

/// Magpie's benchmark_report.json blocks: throughput{...} and latency{ttft,tpot,itl,e2el:
/// {mean_ms, median_ms, p99_ms, std_ms, p50_ms, p90_ms, p95_ms, min_ms, max_ms}} (+ queue, itl_token).
json magpie_throughput_json(const serving_metrics& m);
json magpie_latency_json(const serving_metrics& m);

}  // namespace magpie::serve
