#include "serve/metrics.h"
#include "serve/metrics_printer.h"

#include <gtest/gtest.h>

namespace magpie::serve {
namespace {

constexpr int64_t k_ms = 1000000;
constexpr int64_t k_base = 5000 * k_ms;  // monotonic times are > 0 (0 = never sent)

// A completed record: scheduled at `sched`, dispatched at `arrival`, started at s ms; content
// deliveries at the given ms with token counts; `chunks`: the vLLM chunk times (ms).
request_record rec(size_t i, int64_t sched, int64_t arrival, int64_t s, std::vector<std::pair<int64_t, int32_t>> del,
                   std::vector<int64_t> chunks, int64_t end, int64_t completion_tokens) {
  request_record r;
  r.index = i;
  r.id = "r" + std::to_string(i);
  r.prompt_len = 10;
  r.scheduled_ns = k_base + sched * k_ms;
  r.arrival_ns = k_base + arrival * k_ms;
  r.start_ns = k_base + s * k_ms;
  r.end_ns = k_base + end * k_ms;
  r.http_status = 200;
  r.success = true;
  for (auto [t, n] : del) {
    r.stream.deliveries.push_back({k_base + t * k_ms, n, 1});
    ++r.stream.content_events;
  }
  for (int64_t t : chunks) r.stream.choice_times.push_back(k_base + t * k_ms);
  r.stream.completion_tokens = completion_tokens;
  r.stream.prompt_tokens = 12;
  return r;
}

std::vector<request_record> sample_records() {
  std::vector<request_record> rs;
  // request 0 (chat): role-only chunk at 5, tokens at 100 (1), 110 (1), two chunks coalesced in
  // one read at 130 (1 + 1); the usage-only chunk is no chunk; response end 131
  rs.push_back(rec(0, 0, 0, 0, {{100, 1}, {110, 1}, {130, 2}}, {5, 100, 110, 130, 130}, 131, 4));
  // request 1: scheduled 0, dispatched 2 ms late, waited for a slot until 50; chunks 250, 270
  rs.push_back(rec(1, 0, 2, 50, {{250, 2}, {270, 2}}, {250, 270}, 300, 4));
  // request 2: failed
  request_record f;
  f.index = 2;
  f.scheduled_ns = f.arrival_ns = k_base;
  f.start_ns = k_base + 60 * k_ms;
  f.end_ns = k_base + 70 * k_ms;
  f.http_status = 500;
  f.error = "HTTP 500";
  f.prompt_len = 10;
  rs.push_back(f);
  // a warm-up record is ignored entirely
  request_record w = rec(9, 0, 0, 0, {{1, 1}}, {1}, 5000, 1);
  w.warmup = true;
  rs.push_back(w);
  return rs;
}

TEST(metrics, vllm_definitions_by_hand) {
  metric_options o;
  o.goodput_slo_ms = {{"ttft", 150}};
  serving_metrics m = compute_metrics(sample_records(), k_base, o);
  EXPECT_EQ(m.num_requests, 3u);
  EXPECT_EQ(m.completed, 2u);
  EXPECT_EQ(m.failed, 1u);
  EXPECT_DOUBLE_EQ(m.duration_s, 0.3);
  EXPECT_EQ(m.total_input_tokens, 24);
  EXPECT_EQ(m.total_output_tokens, 8);
  EXPECT_DOUBLE_EQ(m.request_throughput, 2 / 0.3);
  EXPECT_DOUBLE_EQ(m.output_throughput, 8 / 0.3);
  EXPECT_DOUBLE_EQ(m.total_token_throughput, 32 / 0.3);
  // ttft: first chunk (the role-only one) 5, and 200
  EXPECT_DOUBLE_EQ(m.ttft.mean, 102.5);
  EXPECT_DOUBLE_EQ(m.ttft.std, 97.5);
  EXPECT_DOUBLE_EQ(m.ttft.min, 5);
  EXPECT_DOUBLE_EQ(m.ttft.at(99), 5 + 0.99 * 195);
  // e2el: last chunk 130 and 270 - 50 = 220 (not the response ends)
  EXPECT_DOUBLE_EQ(m.e2el.mean, 175);
  // tpot: (e2el - ttft) / 3 = 125/3 and 20/3
  EXPECT_DOUBLE_EQ(m.tpot.mean, (125.0 + 20.0) / 6);
  // itl: one gap per chunk: 95, 10, 20, 0 | 20
  EXPECT_EQ(m.itl.n, 5u);
  EXPECT_DOUBLE_EQ(m.itl.mean, 29);
  EXPECT_DOUBLE_EQ(m.itl.min, 0);
  // client queue (start - arrival, successes): 0, 48; e2el including it: 130, 268
  EXPECT_DOUBLE_EQ(m.client_queue_time.max, 48);
  EXPECT_EQ(m.client_queue_time.n, 2u);
  EXPECT_DOUBLE_EQ(m.e2el_including_client_queue.max, 268);
  // chunks per second from the first successful start: 7 in the first second
  EXPECT_DOUBLE_EQ(m.max_output_tokens_per_s, 7);
  // successful requests over [start, start + e2el): [0,130) and [50,270) -> 2 (the failed one is not counted)
  EXPECT_EQ(m.max_concurrent_requests, 2);
  EXPECT_EQ(m.good_requests, 1u);
  EXPECT_DOUBLE_EQ(m.request_goodput, 1 / 0.3);
  EXPECT_EQ(m.input_tokens_source, "usage");
  EXPECT_EQ(m.output_tokens_source, "usage");
  EXPECT_EQ(m.output_lens, (std::vector<int64_t>{4, 4, 0}));
  EXPECT_EQ(m.input_lens, (std::vector<int64_t>{12, 12, 10}));
}

TEST(metrics, magpie_definitions_by_hand) {
  serving_metrics m = compute_metrics(sample_records(), k_base, {});
  EXPECT_DOUBLE_EQ(m.ttft_content.mean, 150);  // first content read: 100, 200
  EXPECT_DOUBLE_EQ(m.tpot_content.mean, (10.0 + 20.0 / 3) / 2);
  EXPECT_EQ(m.itl_read.n, 3u);                 // reads: 10, 20 | 20
  EXPECT_NEAR(m.itl_read.mean, 50.0 / 3, 1e-9);
  EXPECT_EQ(m.itl_token.n, 5u);                // 10/1, 20/2 x2 | 20/2 x2
  EXPECT_DOUBLE_EQ(m.itl_token.mean, 10);
  EXPECT_EQ(m.requests_with_token_deltas, 2u);
  EXPECT_DOUBLE_EQ(m.e2el_response.mean, (131 + 250) / 2.0);
  EXPECT_EQ(m.queue_time.n, 3u);               // start - scheduled, every request sent: 0, 50, 60
  EXPECT_DOUBLE_EQ(m.queue_time.max, 60);
  EXPECT_DOUBLE_EQ(m.e2el_incl_queue.max, 300);
  EXPECT_EQ(m.schedule_slip.n, 3u);            // arrival - scheduled: 0, 2, 0
  EXPECT_DOUBLE_EQ(m.schedule_slip.max, 2);
  EXPECT_NEAR(m.mean_concurrency, (0.131 + 0.25 + 0.01) / 0.3, 1e-12);
}

TEST(metrics, vllm_keys_and_magpie_blocks) {
  std::vector<request_record> rs = sample_records();
  rs[0].stream.text = "Hi there";
  metric_options o;
  o.percentiles = {99, 99.9};
  o.percentile_metrics = {"ttft", "tpot", "itl"};
  serving_metrics m = compute_metrics(rs, k_base, o);
  run_info info;
  info.model_id = "m";
  info.backend = "openai-chat";
  json j = vllm_result_json(m, rs, k_base, o, info);
  for (const char* k : {"date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts", "request_rate",
                        "burstiness", "max_concurrency", "duration", "completed", "failed", "total_input_tokens",
                        "total_output_tokens", "request_throughput", "request_goodput", "output_throughput",
                        "total_token_throughput", "input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times",
                        "queue_times", "generated_texts", "errors", "max_output_tokens_per_s", "max_concurrent_requests",
                        "rtfx", "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p99_ttft_ms", "p99.9_ttft_ms",
                        "mean_tpot_ms", "p99_itl_ms", "metric_definitions", "mean_ttft_content_ms", "p99_schedule_slip_ms"})
    EXPECT_TRUE(j.contains(k)) << k;
  // --percentile-metrics ttft,tpot,itl: no e2el stats keys, as vLLM
  EXPECT_FALSE(j.contains("mean_e2el_ms"));
  EXPECT_FALSE(j.contains("p90_ttft_ms"));
  EXPECT_EQ(j["endpoint_type"], "openai-chat");
  EXPECT_TRUE(j["label"].is_null());
  EXPECT_DOUBLE_EQ(j["ttfts"][0].get<double>(), 0.005);
  EXPECT_EQ(j["itls"][0].size(), 4u);
  EXPECT_DOUBLE_EQ(j["latencies"][0].get<double>(), 0.13);
  EXPECT_DOUBLE_EQ(j["latencies"][2].get<double>(), 0.0);   // failed: 0, as vLLM
  EXPECT_DOUBLE_EQ(j["start_times"][1].get<double>(), 5.05);  // absolute monotonic seconds
  EXPECT_NEAR(j["queue_times"][1].get<double>(), 0.048, 1e-12);
  EXPECT_EQ(j["generated_texts"][0], "Hi there");
  EXPECT_EQ(j["request_rate"], "inf");
  json lat = magpie_latency_json(m);
  for (const char* d : {"ttft", "tpot", "itl", "e2el", "ttft_content", "itl_read", "e2el_response", "schedule_slip"})
    for (const char* k : {"mean_ms", "median_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p99.9_ms", "std_ms", "count"})
      EXPECT_TRUE(lat[d].contains(k)) << d << "." << k;
  EXPECT_DOUBLE_EQ(lat["e2el"]["mean_ms"].get<double>(), 175);
  EXPECT_DOUBLE_EQ(lat["e2el_response"]["mean_ms"].get<double>(), 190.5);
  json tp = magpie_throughput_json(m);
  EXPECT_EQ(tp["completed_requests"], 2);
  // every vLLM metric gets its stats keys when none are selected
  o.percentile_metrics.clear();
  json all = vllm_result_json(m, rs, k_base, o, info);
  for (const char* k : {"mean_e2el_ms", "p99_client_queue_time_ms", "mean_e2el_including_client_queue_ms"})
    EXPECT_TRUE(all.contains(k)) << k;
}

TEST(metrics, percentile_metrics_parsing) {
  auto ok = parse_percentile_metrics("ttft, tpot,itl,e2el,itl_token");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), 5u);
  EXPECT_FALSE(parse_percentile_metrics("ttft,latency").ok());
}

TEST(metrics, goodput_parsing) {
  auto ok = parse_goodput({"ttft:500", "TPOT:50", "e2el:3000.5"});
  ASSERT_TRUE(ok.ok());
  EXPECT_DOUBLE_EQ(ok->at("tpot"), 50);
  EXPECT_FALSE(parse_goodput({"ttft"}).ok());
  EXPECT_FALSE(parse_goodput({"foo:1"}).ok());
  EXPECT_FALSE(parse_goodput({"ttft:-1"}).ok());
}

TEST(metrics, all_failed_gives_zeros_not_nan) {
  request_record f;
  f.start_ns = 1;
  f.end_ns = 2 * k_ms;
  f.error = "x";
  serving_metrics m = compute_metrics({f}, 0, {});
  EXPECT_EQ(m.completed, 0u);
  EXPECT_EQ(m.ttft.mean, 0);
  EXPECT_EQ(m.request_throughput, 0);
}

}  // namespace
}  // namespace magpie::serve
