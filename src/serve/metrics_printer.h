// The serving metrics as JSON (metrics_json.cpp): vLLM's result file, benchmark_report.json's
// throughput and latency blocks, and the metric definitions (schemas: metrics_schema.h).
#pragma once

#include <vector>

#include "core/json.h"
#include "serve/metrics.h"

namespace magpie::serve {

/// The metric definitions of metrics.h as a JSON object (metric name → text).
json metric_definitions();

/// A result JSON with the keys of vLLM's `bench serve --save-result --save-detailed` (date,
/// endpoint_type, backend, label, model_id, ..., duration, completed, failed, *_throughput,
/// max_output_tokens_per_s, max_concurrent_requests, rtfx, mean_/median_/std_/pNN_<metric>_ms,
/// per-request arrays input_lens, output_lens, ttfts, itls, latencies, start_times (absolute
/// CLOCK_MONOTONIC seconds, the clock of Python's perf_counter), queue_times, generated_texts,
/// errors) plus magpie's (metric_definitions, magpie's distributions, achieved rates, ...).
json vllm_result_json(const serving_metrics& m, const std::vector<request_record>& records, int64_t t0_ns,
                      const metric_options& opts, const run_info& info);

/// Magpie's benchmark_report.json blocks: throughput{...} and latency{ttft,tpot,itl,e2el:
/// {mean_ms, median_ms, p99_ms, std_ms, p50_ms, p90_ms, p95_ms, min_ms, max_ms, count}} (vLLM's
/// definitions, as Magpie's InferenceX client reported them) plus magpie's distributions.
json magpie_throughput_json(const serving_metrics& m);
json magpie_latency_json(const serving_metrics& m);

}  // namespace magpie::serve
