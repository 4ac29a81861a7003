// JSON views of serving_metrics: vLLM `bench serve` result keys and Magpie report blocks.
#include <cmath>

#include "core/strings.h"
#include "serve/metrics.h"

namespace magpie::serve {

namespace {

void add_vllm_stats(json& j, const char* name, const distribution& d) {
  j[strprintf("mean_%s_ms", name)] = json_finite(d.mean);
  j[strprintf("median_%s_ms", name)] = json_finite(d.median);
  j[strprintf("std_%s_ms", name)] = json_finite(d.std);
  for (const auto& [p, v] : d.percentiles) j[strprintf("p%s_%s_ms", percentile_label(p).c_str(), name)] = json_finite(v);
}

json magpie_stats(const distribution& d) {
  json j;
  j["mean_ms"] = json_finite(d.mean);
  j["median_ms"] = json_finite(d.median);
  j["std_ms"] = json_finite(d.std);
  j["min_ms"] = json_finite(d.min);
  j["max_ms"] = json_finite(d.max);
  bool have99 = false;
  for (const auto& [p, v] : d.percentiles) {
    j[strprintf("p%s_ms", percentile_label(p).c_str())] = json_finite(v);
    have99 = have99 || p == 99;
  }
  if (!have99) j["p99_ms"] = nullptr;
  j["count"] = d.n;
  return j;
}

double seconds(int64_t ns) { return static_cast<double>(ns) * 1e-9; }

json rate_json(double r) { return (r > 0 && std::isfinite(r)) ? json(r) : json("inf"); }

}  // namespace

json vllm_result_json(const serving_metrics& m, const std::vector<request_record>& records, int64_t t0_ns,
                      const metric_options& o, const run_info& info) {
  json j;
  j["date"] = info.date;
  j["backend"] = info.backend;
  j["model_id"] = info.model_id;
  j["tokenizer_id"] = nullptr;
  j["base_url"] = info.base_url;
  j["endpoint"] = info.endpoint;
  j["dataset_name"] = info.dataset_name;
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
  add_vllm_stats(j, "ttft", m.ttft);
  add_vllm_stats(j, "tpot", m.tpot);
  add_vllm_stats(j, "itl", m.itl);
  add_vllm_stats(j, "e2el", m.e2el);
  add_vllm_stats(j, "itl_token", m.itl_token);
  add_vllm_stats(j, "queue_time", m.queue);
  add_vllm_stats(j, "e2el_incl_queue", m.e2el_incl_queue);
  j["mean_concurrency"] = m.mean_concurrency;
  j["achieved_request_rate"] = m.achieved_request_rate;
  j["scheduled_request_rate"] = m.scheduled_request_rate;
  j["input_tokens_source"] = m.input_tokens_source;
  j["output_tokens_source"] = m.output_tokens_source;
  j["role_only_chunks"] = m.role_only_chunks;
  j["coalesced_events"] = m.coalesced_events;
  j["requests_with_token_deltas"] = m.requests_with_token_deltas;
  json goodput = json::object();
  for (const auto& [k, v] : o.goodput_slo_ms) goodput[k] = v;
  j["goodput_config"] = goodput;
  j["metric_definitions"] = metric_definitions();
  json ids = json::array(), ttfts = json::array(), itls = json::array(), starts = json::array(),
       sched = json::array(), queues = json::array(), lat = json::array(), errors = json::array(),
       status = json::array();
  for (const auto& r : records) {
    if (r.warmup) continue;
    ids.push_back(r.id);
    sched.push_back(seconds(r.scheduled_ns - t0_ns));
    starts.push_back(r.start_ns > 0 ? json(seconds(r.start_ns - t0_ns)) : json(nullptr));
    queues.push_back(r.start_ns > 0 ? json(seconds(r.start_ns - r.scheduled_ns)) : json(nullptr));
    const auto& del = r.stream.deliveries;
    bool ok = r.success && !del.empty();
    ttfts.push_back(ok ? json(seconds(del.front().t_ns - r.start_ns)) : json(0.0));
    json gaps = json::array();
    if (ok)
      for (size_t i = 1; i < del.size(); ++i) gaps.push_back(seconds(del[i].t_ns - del[i - 1].t_ns));
    itls.push_back(std::move(gaps));
    lat.push_back(r.success ? json(seconds(r.end_ns - r.start_ns)) : json(0.0));
    errors.push_back(r.error);
    status.push_back(r.http_status);
  }
  j["input_lens"] = m.input_lens;
  j["output_lens"] = m.output_lens;
  j["ttfts"] = std::move(ttfts);
  j["itls"] = std::move(itls);
  j["latencies"] = std::move(lat);
  j["start_times"] = std::move(starts);
  j["scheduled_times"] = std::move(sched);
  j["queue_times"] = std::move(queues);
  j["request_ids"] = std::move(ids);
  j["http_status"] = std::move(status);
  j["errors"] = std::move(errors);
  return j;
}

json magpie_throughput_json(const serving_metrics& m) {
  json j;
  j["request_throughput"] = m.request_throughput;
  j["output_throughput"] = m.output_throughput;
  j["total_token_throughput"] = m.total_token_throughput;
  j["completed_requests"] = m.completed;
  j["failed_requests"] = m.failed;
  j["total_input_tokens"] = m.total_input_tokens;
  j["total_output_tokens"] = m.total_output_tokens;
  j["duration_seconds"] = m.duration_s;
  j["request_goodput"] = m.goodput_configured ? json(m.request_goodput) : json(nullptr);
  j["max_output_tokens_per_s"] = m.max_output_tokens_per_s;
  j["max_concurrent_requests"] = m.max_concurrent_requests;
  j["mean_concurrency"] = m.mean_concurrency;
  j["achieved_request_rate"] = m.achieved_request_rate;
  return j;
}

json magpie_latency_json(const serving_metrics& m) {
  json j;
  j["ttft"] = magpie_stats(m.ttft);
  j["tpot"] = magpie_stats(m.tpot);
  j["itl"] = magpie_stats(m.itl);
  j["e2el"] = magpie_stats(m.e2el);
  j["itl_token"] = magpie_stats(m.itl_token);
  j["queue_time"] = magpie_stats(m.queue);
  j["e2el_incl_queue"] = magpie_stats(m.e2el_incl_queue);
  return j;
}

}  // namespace magpie::serve
