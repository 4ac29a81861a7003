// Serving metrics from request records, in two families. Definitions are also written into
// every result by metric_definitions(); docs/serving.md has the table.
//
// vLLM `bench serve` (vllm/benchmarks/serve.py, lib/endpoint_request_func.py), under vLLM's keys:
//   chunk      an SSE event with a non-empty `choices` array (role-only, empty-text and
//              finish-only chunks included; the usage-only chunk is not)
//   ttft       first chunk − request start
//   itl        gaps between successive chunks of a request, pooled over requests
//   e2el       last chunk − request start (vLLM's `latency`)
//   tpot       per request with > 1 output token: (e2el − ttft) / (output tokens − 1)
//   client_queue_time            request start − arrival (the wait for a max-concurrency slot)
//   e2el_including_client_queue  e2el + client_queue_time
//   max_output_tokens_per_s      peak over 1-s buckets, counted from the first successful
//                                request's start, of chunks of successful requests
//   max_concurrent_requests      peak of successful requests in flight over [start, start + e2el)
//   request_goodput              completed requests meeting every SLO (tpot 0 for <= 1 token) / duration
//   Distributions cover successful requests. Output tokens: usage.completion_tokens, else the
//   sum of per-chunk usage deltas, else one per content event (vLLM re-tokenises the text).
//
// magpie's own, under their own keys:
//   ttft_content   first read carrying generated content − request start
//   tpot_content   (last content read − first content read) / (output tokens − 1)
//   itl_read       gaps between successive reads that carried content (coalesced events count once)
//   itl_token      each read gap divided by the tokens it carried (usage deltas), repeated per
//                  token; requests whose server reported usage in every chunk
//   e2el_response  end of the HTTP response − request start
//   queue_time     request start − scheduled arrival (every request sent)
//   e2el_incl_queue  end of response − scheduled arrival
//   schedule_slip  arrival − scheduled arrival: how late the client dispatched (every request that arrived)
//   read_lag       the client's read − the kernel's receive time of the bytes (kernel timestamps only)
//   duration       schedule origin → end of the last response (both families)
// std is the population standard deviation; percentiles interpolate linearly (numpy's default).
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
  std::vector<std::pair<double, double>> percentiles;       ///< (p, value ms), ascending p
  double at(double p) const;                                ///< the value for p (0 when not computed)
};

struct metric_options {
  std::vector<double> percentiles = {50, 90, 95, 99};  ///< vLLM's pNN keys (--metric-percentiles)
  std::vector<std::string> percentile_metrics;        ///< metrics with vLLM stats keys; empty: all
  std::map<std::string, double> goodput_slo_ms;       ///< keys ttft, tpot, e2el
  double requested_rate = 0;                          ///< requests/s; <= 0: inf
  double burstiness = 1.0;
  int64_t max_concurrency = 0;                        ///< 0: unlimited
};

/// Percentiles every distribution carries for magpie's report (p50, p90, p95, p99).
const std::vector<double>& report_percentiles();

struct serving_metrics {
  // vLLM's definitions
  double duration_s = 0;
  size_t num_requests = 0, completed = 0, failed = 0;
  int64_t total_input_tokens = 0, total_output_tokens = 0;
  double request_throughput = 0, request_goodput = 0, output_throughput = 0, total_token_throughput = 0;
  double max_output_tokens_per_s = 0;
  int64_t max_concurrent_requests = 0;
  size_t good_requests = 0;
  bool goodput_configured = false;     ///< --goodput SLOs were given
  distribution ttft, tpot, itl, e2el, client_queue_time, e2el_including_client_queue;
  std::vector<int64_t> input_lens, output_lens;  ///< per measured request (0 output when failed)
  // magpie's own
  distribution ttft_content, tpot_content, itl_read, itl_token, e2el_response, queue_time, e2el_incl_queue,
      schedule_slip, read_lag;
  double mean_concurrency = 0;         ///< Σ (response end − start) / duration over sent requests
  double achieved_request_rate = 0;    ///< (sent − 1) / (last start − first start); 0 if < 2 sent
  double scheduled_request_rate = 0;   ///< the same over the schedule
  std::string input_tokens_source;     ///< "usage" | "dataset" | "mixed"
  std::string output_tokens_source;    ///< "usage" | "usage_deltas" | "chunks" | "mixed"
  std::string timestamp_source;        ///< "kernel" (SO_TIMESTAMPING) | "read" | "mixed" (set by the client)
  size_t role_only_chunks = 0, coalesced_events = 0, requests_with_token_deltas = 0;
};

/// One request through vLLM's definitions (times in ns; 0 where vLLM records 0).
struct vllm_request_view {
  bool success = false;
  int64_t ttft_ns = 0;        ///< first chunk − start (also for failed requests that got a chunk)
  int64_t latency_ns = 0;     ///< last chunk − start (successful requests only)
  int64_t output_len = 0;     ///< 0 for failed requests
  int64_t prompt_len = 0;     ///< usage.prompt_tokens when reported, else the dataset's
  std::string output_source;  ///< see output_token_count
};
vllm_request_view vllm_view(const request_record& r);

/// Parses "ttft:500 tpot:50 e2el:3000" items (ms) into SLOs.
status_or<std::map<std::string, double>> parse_goodput(const std::vector<std::string>& items);

/// Parses --percentile-metrics ("ttft,tpot,itl"); names are vLLM's plus magpie's distributions.
status_or<std::vector<std::string>> parse_percentile_metrics(const std::string& list);

/// mean/median/std/min/max and the percentiles of `pcts` ∪ report_percentiles() (values in ms).
distribution summarize_ms(std::vector<double> v, const std::vector<double>& pcts);

/// Metrics over the non-warm-up records; t0_ns is the schedule origin. read_lag and
/// timestamp_source are left to the caller (they come from the load run, not the records).
serving_metrics compute_metrics(const std::vector<request_record>& records, int64_t t0_ns, const metric_options& opts);

/// "99" for 99.0, "99.9" for 99.9 (vLLM's key spelling: p99_ttft_ms, p99.9_ttft_ms).
std::string percentile_label(double p);

struct run_info {
  std::string backend = "openai";  ///< openai | openai-chat (vLLM's backend / endpoint_type)
  std::string label;               ///< --label ("" → null, as vLLM)
  std::string model_id, base_url, endpoint, dataset_name, date;
  size_t num_prompts = 0;
};

}  // namespace magpie::serve
