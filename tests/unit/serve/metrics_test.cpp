#include "serve/metrics.h"

#include <gtest/gtest.h>

namespace magpie::serve {
namespace {

constexpr int64_t k_ms = 1000000;
constexpr int64_t k_base = 5000 * k_ms;  // monotonic times are > 0 (0 = never sent)

// A completed record: start at s ms, deliveries at the given ms with token counts.
request_record rec(size_t i, int64_t sched, int64_t s, std::vector<std::pair<int64_t, int32_t>> del, int64_t end,
                   int64_t completion_tokens) {
  request_record r;
  r.index = i;
  r.id = "r" + std::to_string(i);
  r.prompt_len = 10;
  r.scheduled_ns = k_base + sched * k_ms;
  r.start_ns = k_base + s * k_ms;
  r.end_ns = k_base + end * k_ms;
  r.http_status = 200;
  r.success = true;
  for (auto [t, n] : del) {
    r.stream.deliveries.push_back({k_base + t * k_ms, n, 1});
    ++r.stream.content_events;
  }
  r.stream.completion_tokens = completion_tokens;
  r.stream.prompt_tokens = 12;
  return r;
}

TEST(metrics, hand_computed_values) {
  std::vector<request_record> rs;
  // request 0: start 0, tokens at 100 (1), 110 (1), 130 (2) → 4 tokens, end 131
  rs.push_back(rec(0, 0, 0, {{100, 1}, {110, 1}, {130, 2}}, 131, 4));
  // request 1: scheduled 0 but queued to 50; tokens at 250 (2), 270 (2) → 4 tokens, end 300
  rs.push_back(rec(1, 0, 50, {{250, 2}, {270, 2}}, 300, 4));
  // request 2: failed
  request_record f;
  f.index = 2;
  f.scheduled_ns = k_base;
  f.start_ns = k_base + 60 * k_ms;
  f.end_ns = k_base + 70 * k_ms;
  f.http_status = 500;
  f.error = "HTTP 500";
  f.prompt_len = 10;
  rs.push_back(f);
  // a warm-up record is ignored entirely
  request_record w = rec(9, 0, 0, {{1, 1}}, 5000, 1);
  w.warmup = true;
  rs.push_back(w);

  metric_options o;
  o.goodput_slo_ms = {{"ttft", 150}};
  serving_metrics m = compute_metrics(rs, k_base, o);
  EXPECT_EQ(m.num_requests, 3u);
  EXPECT_EQ(m.completed, 2u);
  EXPECT_EQ(m.failed, 1u);
  EXPECT_DOUBLE_EQ(m.duration_s, 0.3);
  EXPECT_EQ(m.total_input_tokens, 24);
  EXPECT_EQ(m.total_output_tokens, 8);
  EXPECT_DOUBLE_EQ(m.request_throughput, 2 / 0.3);
  EXPECT_DOUBLE_EQ(m.output_throughput, 8 / 0.3);
  EXPECT_DOUBLE_EQ(m.total_token_throughput, 32 / 0.3);
  // ttft: 100 and 200
  EXPECT_DOUBLE_EQ(m.ttft.mean, 150);
  EXPECT_DOUBLE_EQ(m.ttft.std, 50);
  EXPECT_DOUBLE_EQ(m.ttft.min, 100);
  ASSERT_EQ(m.ttft.percentiles.size(), 4u);
  EXPECT_DOUBLE_EQ(m.ttft.percentiles[3].second, 100 + 0.99 * 100);
  // tpot: (130-100)/3 = 10, (270-250)/3 = 6.667
  EXPECT_DOUBLE_EQ(m.tpot.mean, (10.0 + 20.0 / 3) / 2);
  // itl (chunk gaps): 10, 20, 20
  EXPECT_EQ(m.itl.n, 3u);
  EXPECT_NEAR(m.itl.mean, 50.0 / 3, 1e-9);
  // itl_token: 10/1, 20/2 x2 | 20/2 x2 → 10,10,10,10,10
  EXPECT_EQ(m.itl_token.n, 5u);
  EXPECT_DOUBLE_EQ(m.itl_token.mean, 10);
  EXPECT_EQ(m.requests_with_token_deltas, 2u);
  // e2el: 131, 250
  EXPECT_DOUBLE_EQ(m.e2el.mean, (131 + 250) / 2.0);
  // queue: 0, 50, 60 (all sent requests)
  EXPECT_EQ(m.queue.n, 3u);
  EXPECT_DOUBLE_EQ(m.queue.max, 60);
  EXPECT_DOUBLE_EQ(m.e2el_incl_queue.max, 300);
  // in flight: [0,131], [50,300], [60,70] → peak 3
  EXPECT_EQ(m.max_concurrent_requests, 3);
  EXPECT_NEAR(m.mean_concurrency, (0.131 + 0.25 + 0.01) / 0.3, 1e-12);
  EXPECT_EQ(m.good_requests, 1u);
  EXPECT_DOUBLE_EQ(m.request_goodput, 1 / 0.3);
  EXPECT_DOUBLE_EQ(m.max_output_tokens_per_s, 8);
  EXPECT_EQ(m.input_tokens_source, "usage");
  EXPECT_EQ(m.output_tokens_source, "usage");
  EXPECT_EQ(m.output_lens, (std::vector<int64_t>{4, 4, 0}));
}

TEST(metrics, vllm_keys_and_magpie_blocks) {
  std::vector<request_record> rs = {rec(0, 0, 0, {{10, 1}, {20, 1}}, 21, 2)};
  metric_options o;
  o.percentiles = {99, 99.9};
  serving_metrics m = compute_metrics(rs, k_base, o);
  run_info info;
  info.model_id = "m";
  json j = vllm_result_json(m, rs, k_base, o, info);
  for (const char* k : {"duration", "completed", "failed", "total_input_tokens", "total_output_tokens",
                        "request_throughput", "output_throughput", "total_token_throughput", "mean_ttft_ms",
                        "median_ttft_ms", "std_ttft_ms", "p99_ttft_ms", "p99.9_ttft_ms", "mean_tpot_ms",
                        "p99_itl_ms", "mean_e2el_ms", "ttfts", "itls", "input_lens", "output_lens", "errors",
                        "start_times", "metric_definitions", "max_concurrent_requests"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_DOUBLE_EQ(j["ttfts"][0].get<double>(), 0.01);
  EXPECT_EQ(j["itls"][0].size(), 1u);
  EXPECT_EQ(j["request_rate"], "inf");
  json lat = magpie_latency_json(m);
  for (const char* k : {"mean_ms", "median_ms", "p99_ms", "std_ms"}) EXPECT_TRUE(lat["ttft"].contains(k)) << k;
  json tp = magpie_throughput_json(m);
  EXPECT_EQ(tp["completed_requests"], 1);
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
