// JSON views of serving_metrics: vLLM `bench serve` result keys and Magpie report blocks.
#include <algorithm>
#include <cmath>

#include "core/json_schema.h"
#include "core/strings.h"
#include "serve/metrics.h"
#include "serve/metrics_printer.h"
#include "serve/metrics_schema.h"

namespace magpie::serve {

namespace {

/// vLLM's distributions, in vLLM's order, and magpie's own.
const std::vector<std::pair<const char*, distribution serving_metrics::*>>& vllm_distributions() {
  static const std::vector<std::pair<const char*, distribution serving_metrics::*>> d = {
      {"ttft", &serving_metrics::ttft},
      {"tpot", &serving_metrics::tpot},
      {"itl", &serving_metrics::itl},
      {"e2el", &serving_metrics::e2el},
      {"client_queue_time", &serving_metrics::client_queue_time},
      {"e2el_including_client_queue", &serving_metrics::e2el_including_client_queue}};
  return d;
}

const std::vector<std::pair<const char*, distribution serving_metrics::*>>& magpie_distributions() {
  static const std::vector<std::pair<const char*, distribution serving_metrics::*>> d = {
      {"ttft_content", &serving_metrics::ttft_content},
      {"tpot_content", &serving_metrics::tpot_content},
      {"itl_read", &serving_metrics::itl_read},
      {"itl_token", &serving_metrics::itl_token},
      {"e2el_response", &serving_metrics::e2el_response},
      {"queue_time", &serving_metrics::queue_time},
      {"e2el_incl_queue", &serving_metrics::e2el_incl_queue},
      {"schedule_slip", &serving_metrics::schedule_slip},
      {"read_lag", &serving_metrics::read_lag}};
  return d;
}

/// vLLM's process_one_metric keys: mean_/median_/std_<name>_ms and p<label>_<name>_ms for the
/// selected percentiles.
void add_vllm_stats(json& j, const char* name, const distribution& d, const std::vector<double>& pcts) {
  j[strprintf("mean_%s_ms", name)] = json_finite(d.mean);
  j[strprintf("median_%s_ms", name)] = json_finite(d.median);
  j[strprintf("std_%s_ms", name)] = json_finite(d.std);
  for (double p : pcts) j[strprintf("p%s_%s_ms", percentile_label(p).c_str(), name)] = json_finite(d.at(p));
}

json magpie_stats(const distribution& d) {
  json j;
  j["mean_ms"] = json_finite(d.mean);
  j["median_ms"] = json_finite(d.median);
  j["std_ms"] = json_finite(d.std);
  j["min_ms"] = json_finite(d.min);
  j["max_ms"] = json_finite(d.max);
  for (const auto& [p, v] : d.percentiles) j[strprintf("p%s_ms", percentile_label(p).c_str())] = json_finite(v);
  j["count"] = d.n;
  return j;
}

double seconds(int64_t ns) { return static_cast<double>(ns) * 1e-9; }

json rate_json(double r) { return (r > 0 && std::isfinite(r)) ? json(r) : json("inf"); }

bool selected(const metric_options& o, const char* name) {
  if (o.percentile_metrics.empty()) return true;
  return std::find(o.percentile_metrics.begin(), o.percentile_metrics.end(), name) != o.percentile_metrics.end();
}

/// vLLM's per-request arrays (every measured request, failed ones included).
void add_request_arrays(json& j, const std::vector<request_record>& records, int64_t t0_ns) {
  json ttfts = json::array(), itls = json::array(), lat = json::array(), starts = json::array(), queues = json::array(),
       texts = json::array(), errors = json::array(), ids = json::array(), sched = json::array(), status = json::array();
  for (const auto& r : records) {
    if (r.warmup) continue;
    vllm_request_view v = vllm_view(r);
    ttfts.push_back(seconds(v.ttft_ns));
    json gaps = json::array();
    const auto& ct = r.stream.choice_times;
    for (size_t i = 1; i < ct.size(); ++i) gaps.push_back(seconds(ct[i] - ct[i - 1]));
    itls.push_back(std::move(gaps));
    lat.push_back(seconds(v.latency_ns));
    starts.push_back(r.start_ns > 0 ? json(seconds(r.start_ns)) : json(nullptr));
    queues.push_back(r.start_ns > 0 && r.arrival_ns > 0 ? json(seconds(r.start_ns - r.arrival_ns)) : json(nullptr));
    texts.push_back(r.stream.text);
    errors.push_back(r.error);
    ids.push_back(r.id);
    sched.push_back(seconds(r.scheduled_ns - t0_ns));
    status.push_back(r.http_status);
  }
  j["ttfts"] = std::move(ttfts);
  j["itls"] = std::move(itls);
  j["latencies"] = std::move(lat);
  j["start_times"] = std::move(starts);
  j["queue_times"] = std::move(queues);
  j["generated_texts"] = std::move(texts);
  j["errors"] = std::move(errors);
  j["request_ids"] = std::move(ids);
  j["scheduled_times"] = std::move(sched);
  j["http_status"] = std::move(status);
}

}  // namespace

json metric_definitions() {
  json d;
  d["chunk"] = "vLLM: an SSE event with a non-empty choices array (role-only, empty-text and finish chunks included; the usage-only chunk is not)";
  d["ttft"] = "vLLM: time to first token = first chunk - request start";
  d["tpot"] = "vLLM: time per output token excluding the first = (e2el - ttft) / (output tokens - 1), requests with > 1 output token";
  d["itl"] = "vLLM: inter-token latency = gaps between successive chunks of a request, pooled";
  d["e2el"] = "vLLM: end-to-end latency = last chunk - request start";
  d["client_queue_time"] = "vLLM: request start - arrival (waiting for a max-concurrency slot)";
  d["e2el_including_client_queue"] = "vLLM: e2el + client_queue_time";
  d["max_output_tokens_per_s"] = "vLLM: peak over 1-s buckets (from the first successful start) of chunks of successful requests";
  d["max_concurrent_requests"] = "vLLM: peak of successful requests in flight over [start, start + e2el)";
  d["request_goodput"] = "vLLM: completed requests meeting every --goodput SLO (tpot 0 for <= 1 token) / duration";
  d["output_tokens"] = "usage.completion_tokens, else the sum of per-chunk usage deltas, else one per content event";
  d["ttft_content"] = "magpie: first read carrying generated content (text or a usage increase) - request start";
  d["tpot_content"] = "magpie: (last content read - first content read) / (output tokens - 1)";
  d["itl_read"] = "magpie: gaps between successive reads that carried content; events coalesced into one read count once";
  d["itl_token"] = "magpie: each read gap divided by the tokens it carried (usage deltas), repeated per token; requests with per-chunk usage only";
  d["e2el_response"] = "magpie: end of the HTTP response - request start";
  d["queue_time"] = "magpie: request start - scheduled arrival (schedule slip + max-concurrency wait), every request sent";
  d["e2el_incl_queue"] = "magpie: end of response - scheduled arrival";
  d["schedule_slip"] = "magpie: arrival - scheduled arrival, how late the client dispatched a request (client saturation)";
  d["read_lag"] = "magpie: the client's socket read - the kernel's receive time of the bytes (kernel timestamps only)";
  d["duration"] = "benchmark start (schedule origin) to the end of the last response, seconds";
  d["mean_concurrency"] = "magpie: sum of (response end - start) over sent requests / duration";
  d["achieved_request_rate"] = "magpie: (requests sent - 1) / (last start - first start)";
  d["statistics"] = "times in ms; distributions over successful requests unless stated; std = population standard deviation; "
                    "percentiles interpolate linearly between order statistics (numpy's default)";
  d["clock"] = "CLOCK_MONOTONIC (Python's perf_counter on Linux); token times are the kernel's receive time of the bytes "
               "(SO_TIMESTAMPING) where available, else the time of the read";
  return d;
}

json vllm_result_json(const serving_metrics& m, const std::vector<request_record>& records, int64_t t0_ns,
                      const metric_options& o, const run_info& info) {
  json j;
  j["date"] = info.date;
  j["endpoint_type"] = info.backend;
  j["backend"] = info.backend;
  j["label"] = info.label.empty() ? json(nullptr) : json(info.label);
  j["model_id"] = info.model_id;
  j["tokenizer_id"] = nullptr;
  j["num_prompts"] = info.num_prompts;
  j["request_rate"] = rate_json(o.requested_rate);
  j["burstiness"] = o.burstiness;
  j["max_concurrency"] = o.max_concurrency > 0 ? json(o.max_concurrency) : json(nullptr);
  j["duration"] = m.duration_s;
  j["completed"] = m.completed;
  j["failed"] = m.failed;
  j["total_input_tokens"] = m.total_input_tokens;
  j["total_output_tokens"] = m.total_output_tokens;
  j["request_throughput"] = m.request_throughput;
  j["request_goodput"] = o.goodput_slo_ms.empty() ? json(nullptr) : json(m.request_goodput);
  j["output_throughput"] = m.output_throughput;
  j["total_token_throughput"] = m.total_token_throughput;
  j["max_output_tokens_per_s"] = m.max_output_tokens_per_s;
  j["max_concurrent_requests"] = m.max_concurrent_requests;
  j["rtfx"] = 0.0;
  j["input_lens"] = m.input_lens;
  j["output_lens"] = m.output_lens;
  add_request_arrays(j, records, t0_ns);
  for (const auto& [name, member] : vllm_distributions())
    if (selected(o, name)) add_vllm_stats(j, name, m.*member, o.percentiles);
  // magpie's additions
  for (const auto& [name, member] : magpie_distributions()) add_vllm_stats(j, name, m.*member, o.percentiles);
  j["base_url"] = info.base_url;
  j["endpoint"] = info.endpoint;
  j["dataset_name"] = info.dataset_name;
  j["benchmark_start_time"] = seconds(t0_ns);
  j["mean_concurrency"] = m.mean_concurrency;
  j["achieved_request_rate"] = m.achieved_request_rate;
  j["scheduled_request_rate"] = m.scheduled_request_rate;
  j["input_tokens_source"] = m.input_tokens_source;
  j["output_tokens_source"] = m.output_tokens_source;
  j["timestamp_source"] = m.timestamp_source;
  j["role_only_chunks"] = m.role_only_chunks;
  j["coalesced_events"] = m.coalesced_events;
  j["requests_with_token_deltas"] = m.requests_with_token_deltas;
  json goodput = json::object();
  for (const auto& [k, v] : o.goodput_slo_ms) goodput[k] = v;
  j["goodput_config"] = goodput;
  j["metric_definitions"] = metric_definitions();
  return j;
}

namespace {

/// Magpie's throughput block, key by key: the writer and the schema both read this table.
struct throughput_key {
  const char* key;
  const char* type;  ///< JSON type of the value
  const char* description;
  json (*value)(const serving_metrics&);
};

const throughput_key k_throughput[] = {
    {"request_throughput", "number", "completed requests / duration, req/s",
     [](const serving_metrics& m) { return json(m.request_throughput); }},
    {"output_throughput", "number", "output tokens / duration, tok/s",
     [](const serving_metrics& m) { return json(m.output_throughput); }},
    {"total_token_throughput", "number", "(input + output tokens) / duration, tok/s",
     [](const serving_metrics& m) { return json(m.total_token_throughput); }},
    {"completed_requests", "integer", "requests that succeeded", [](const serving_metrics& m) { return json(m.completed); }},
    {"failed_requests", "integer", "requests that failed", [](const serving_metrics& m) { return json(m.failed); }},
    {"total_input_tokens", "integer", "prompt tokens of completed requests",
     [](const serving_metrics& m) { return json(m.total_input_tokens); }},
    {"total_output_tokens", "integer", "generated tokens of completed requests",
     [](const serving_metrics& m) { return json(m.total_output_tokens); }},
    {"duration_seconds", "number", "measured span, s", [](const serving_metrics& m) { return json(m.duration_s); }},
    {"request_goodput", "number|null", "requests meeting every SLO / duration, req/s (null: no --goodput SLOs)",
     [](const serving_metrics& m) { return m.goodput_configured ? json(m.request_goodput) : json(nullptr); }},
    {"max_output_tokens_per_s", "number", "peak output tokens over 1-s buckets",
     [](const serving_metrics& m) { return json(m.max_output_tokens_per_s); }},
    {"max_concurrent_requests", "integer", "peak successful requests in flight",
     [](const serving_metrics& m) { return json(m.max_concurrent_requests); }},
    {"mean_concurrency", "number", "mean requests in flight", [](const serving_metrics& m) { return json(m.mean_concurrency); }},
    {"achieved_request_rate", "number", "requests sent per second (0: fewer than 2 sent)",
     [](const serving_metrics& m) { return json(m.achieved_request_rate); }}};

json stats_schema(const std::string& name) {
  using namespace schema;
  auto ms = [](const char* what) { return typed_or_null("number", std::string(what) + ", ms (null: not finite)"); };
  json j = closed({{"mean_ms", ms("mean")},
                   {"median_ms", ms("median")},
                   {"std_ms", ms("standard deviation")},
                   {"min_ms", ms("minimum")},
                   {"max_ms", ms("maximum")},
                   {"count", typed("integer", "samples")}});
  j["patternProperties"] = {{"^p[0-9.]+_ms$", ms("percentile (--metric-percentiles)")}};
  j["description"] = name + " distribution";
  return j;
}

}  // namespace

json magpie_throughput_json(const serving_metrics& m) {
  json j;
  for (const auto& k : k_throughput) j[k.key] = k.value(m);
  return j;
}

json magpie_latency_json(const serving_metrics& m) {
  json j;
  for (const auto& [name, member] : vllm_distributions()) j[name] = magpie_stats(m.*member);
  for (const auto& [name, member] : magpie_distributions()) j[name] = magpie_stats(m.*member);
  return j;
}

json magpie_throughput_schema() {
  json props = json::object();
  for (const auto& k : k_throughput)
    props[k.key] = std::string(k.type) == "number|null" ? schema::typed_or_null("number", k.description)
                                                        : schema::typed(k.type, k.description);
  return schema::closed(props);
}

json magpie_latency_schema() {
  json props = json::object();
  for (const auto& [name, member] : vllm_distributions()) props[name] = stats_schema(name);
  for (const auto& [name, member] : magpie_distributions()) props[name] = stats_schema(name);
  return schema::closed(props);
}

}  // namespace magpie::serve
