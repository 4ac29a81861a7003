// The client against the simulated server: every metric is checked against the server's
// ground-truth send times (same host, same CLOCK_MONOTONIC).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "serve/client.h"
#include "sim_fixture.h"

namespace magpie::serve {
namespace {

using testing::sim_server;
using testing::truth;

constexpr double k_tolerance_ms = 1.0;  // acceptance: TTFT within 1 ms of ground truth

client_config base_config(const sim_server& s, size_t n, int64_t in_len, int64_t out_len) {
  client_config c;
  c.url = s.url();
  c.model = "sim-model";
  c.dataset.num_prompts = n;
  c.dataset.input_len = in_len;
  c.dataset.output_len = out_len;
  c.num_warmups = 0;
  return c;
}

double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

// Timing errors of the client against the ground truth: read time − send time of each event
// (TTFT errors separately). Token counts and prompt lengths are checked exactly.
struct timing_errors {
  std::vector<double> ttft_ms, delivery_ms;
  double max_ttft() const { return ttft_ms.empty() ? 0 : *std::max_element(ttft_ms.begin(), ttft_ms.end()); }
  double min_all() const {
    double m = 0;
    for (double x : ttft_ms) m = std::min(m, x);
    for (double x : delivery_ms) m = std::min(m, x);
    return m;
  }
  double median_delivery() const {
    std::vector<double> v = delivery_ms;
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
  }
};

timing_errors check_against_truth(const client_result& r, const std::map<std::string, truth>& gt, bool one_event_per_read) {
  timing_errors e;
  for (const auto& rec : r.records) {
    if (!rec.success) continue;
    auto it = gt.find(rec.id);
    EXPECT_NE(it, gt.end()) << rec.id;
    if (it == gt.end()) continue;
    const truth& t = it->second;
    EXPECT_FALSE(t.events.empty());
    if (t.events.empty()) continue;
    e.ttft_ms.push_back(ms(rec.stream.deliveries.front().t_ns - t.events.front().first));
    std::string src;
    EXPECT_EQ(output_token_count(rec.stream, &src), t.generated);
    EXPECT_EQ(rec.stream.prompt_tokens, t.prompt_tokens);
    if (one_event_per_read && rec.stream.coalesced_events == 0) {
      EXPECT_EQ(rec.stream.deliveries.size(), t.events.size()) << rec.id;
      for (size_t k = 0; k < t.events.size() && k < rec.stream.deliveries.size(); ++k) {
        e.delivery_ms.push_back(ms(rec.stream.deliveries[k].t_ns - t.events[k].first));
        EXPECT_EQ(rec.stream.deliveries[k].tokens, t.events[k].second);
      }
    }
  }
  EXPECT_FALSE(e.ttft_ms.empty());
  EXPECT_GE(e.min_all(), 0.0) << "a read cannot precede its send";
  return e;
}

// Runs a scenario until one run has every TTFT within the tolerance (at most 3 runs): this
// box is shared, and a descheduled client delays every stream at once; such a stall is
// not a measurement error of the client. The median delivery error must stay small always.
template <class F>
void expect_ttft_within_tolerance(F&& run_once) {
  double worst = 0, median = 0;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    timing_errors e = run_once();
    worst = e.max_ttft();
    median = e.median_delivery();
    if (worst <= k_tolerance_ms && median < 0.5) return;
    std::fprintf(stderr, "attempt %d: max TTFT error %.3f ms (scheduling stall?), retrying\n", attempt, worst);
  }
  EXPECT_LE(worst, k_tolerance_ms) << "max TTFT error vs ground truth in the last of 3 runs";
  EXPECT_LT(median, 0.5) << "median read-vs-send error in the last of 3 runs";
}

TEST(client_sim, metrics_match_ground_truth) {
  expect_ttft_within_tolerance([] {
  sim_server s({"--decode-step-ms", "4", "--prefill-tokens-per-s", "200000", "--max-batch", "8"});
  client_config c = base_config(s, 24, 400, 12);
  c.max_concurrency = 6;
  auto r = run_client(c);
  EXPECT_TRUE(r.ok()) << r.get_status().to_string();
  if (!r.ok()) return timing_errors{};
  EXPECT_EQ(r->metrics.completed, 24u);
  EXPECT_EQ(r->metrics.failed, 0u);
  auto gt = s.read_truth();
  timing_errors errs = check_against_truth(*r, gt, true);
  // Aggregates recomputed from the ground truth.
  std::vector<double> ttft_truth, tpot_truth;
  int64_t out_tokens = 0, in_tokens = 0, last_end = 0;
  for (const auto& rec : r->records) {
    const truth& t = gt.at(rec.id);
    ttft_truth.push_back(ms(t.events.front().first - rec.start_ns));
    tpot_truth.push_back(ms(t.events.back().first - t.events.front().first) / static_cast<double>(t.generated - 1));
    out_tokens += t.generated;
    in_tokens += t.prompt_tokens;
    last_end = std::max(last_end, rec.end_ns);
  }
  double mean_ttft = 0, mean_tpot = 0;
  for (double x : ttft_truth) mean_ttft += x / ttft_truth.size();
  for (double x : tpot_truth) mean_tpot += x / tpot_truth.size();
  EXPECT_NEAR(r->metrics.tpot.mean, mean_tpot, 0.2);
  EXPECT_EQ(r->metrics.total_output_tokens, out_tokens);
  EXPECT_EQ(r->metrics.total_input_tokens, in_tokens);
  EXPECT_EQ(r->metrics.input_tokens_source, "usage");
  EXPECT_EQ(r->metrics.output_tokens_source, "usage");
  EXPECT_NEAR(r->metrics.output_throughput, out_tokens / r->metrics.duration_s, 1e-6);
  EXPECT_EQ(r->metrics.max_concurrent_requests, 6);
  // ITL against the ground-truth event gaps (the sim's 4 ms steps stretch under CPU load).
  std::vector<double> gaps;
  for (const auto& rec : r->records) {
    const truth& t = gt.at(rec.id);
    for (size_t k = 1; k < t.events.size(); ++k) gaps.push_back(ms(t.events[k].first - t.events[k - 1].first));
  }
  std::sort(gaps.begin(), gaps.end());
  EXPECT_EQ(r->metrics.itl.n, gaps.size());  // vLLM's ITL: one gap per chunk, coalesced or not
  if (r->metrics.coalesced_events == 0) {
    EXPECT_EQ(r->metrics.itl_read.n, gaps.size());
  }
  EXPECT_NEAR(r->metrics.itl.median, gaps[gaps.size() / 2], std::max(0.5, errs.max_ttft()));
  EXPECT_GE(r->metrics.itl_read.median, 3.5);  // never faster than the 4 ms model
  EXPECT_GT(r->metrics.queue_time.max, 1.0);  // 24 requests through 6 slots wait client-side
  EXPECT_GT(r->metrics.client_queue_time.max, 1.0);
  // completions without a role chunk: vLLM's chunks are the content events
  EXPECT_NEAR(r->metrics.ttft.mean, r->metrics.ttft_content.mean, 1e-9);
  for (const auto& rec : r->records) EXPECT_LE(rec.stream.choice_times.back(), rec.end_ns);
  EXPECT_LE(r->metrics.e2el.mean, r->metrics.e2el_response.mean);  // the last chunk is no later than the response end
  EXPECT_EQ(r->vllm_json["completed"], 24);
  EXPECT_EQ(r->vllm_json["ttfts"].size(), 24u);
  // ttft aggregate vs truth within the worst per-request error of this run
  EXPECT_NEAR(r->metrics.ttft.mean, mean_ttft, std::max(k_tolerance_ms, errs.max_ttft()));
  return errs;
  });
}

TEST(client_sim, multi_token_chunks_and_token_exact_itl) {
  sim_server s({"--decode-step-ms", "2", "--chunk-tokens", "4"});
  client_config c = base_config(s, 6, 16, 10);
  auto r = run_client(c);
  ASSERT_TRUE(r.ok()) << r.get_status().to_string();
  ASSERT_EQ(r->metrics.completed, 6u);
  auto gt = s.read_truth();
  timing_errors e = check_against_truth(*r, gt, true);
  EXPECT_LT(e.median_delivery(), 2.0);  // the strict bound is in metrics_match_ground_truth
  for (const auto& rec : r->records) {
    ASSERT_EQ(rec.stream.deliveries.size(), 3u);  // 4 + 4 + 2 tokens
    EXPECT_EQ(rec.stream.deliveries[0].tokens, 4);
    EXPECT_EQ(rec.stream.deliveries[2].tokens, 2);
  }
  EXPECT_EQ(r->metrics.total_output_tokens, 60);
  EXPECT_EQ(r->metrics.requests_with_token_deltas, 6u);
  // per-token gaps against the ground truth: each event gap divided by its tokens
  std::vector<double> per_token;
  for (const auto& rec : r->records) {
    const truth& t = gt.at(rec.id);
    for (size_t k = 1; k < t.events.size(); ++k)
      for (int n = 0; n < t.events[k].second; ++n) per_token.push_back(ms(t.events[k].first - t.events[k - 1].first) / t.events[k].second);
  }
  std::sort(per_token.begin(), per_token.end());
  EXPECT_EQ(r->metrics.itl_token.n, per_token.size());
  EXPECT_NEAR(r->metrics.itl_token.median, per_token[per_token.size() / 2], 0.5);
  EXPECT_GE(r->metrics.itl_token.median, 1.8);  // the model's 2 ms step per token
  EXPECT_GT(r->metrics.itl.mean, 2 * r->metrics.itl_token.mean);  // chunks carry 2-4 tokens
}

TEST(client_sim, role_only_first_chunk_is_not_ttft) {
  sim_server s({"--decode-step-ms", "5", "--prefill-tokens-per-s", "20000", "--role-chunk"});
  client_config c = base_config(s, 4, 200, 4);
  c.endpoint = "/v1/chat/completions";
  c.dataset.token_ids = false;
  auto r = run_client(c);
  ASSERT_TRUE(r.ok()) << r.get_status().to_string();
  ASSERT_EQ(r->metrics.completed, 4u);
  EXPECT_EQ(r->metrics.role_only_chunks, 4u);
  auto gt = s.read_truth();
  timing_errors e = check_against_truth(*r, gt, true);
  EXPECT_LT(e.median_delivery(), 2.0);  // the strict bound is in metrics_match_ground_truth
  for (const auto& rec : r->records) {
    const truth& t = gt.at(rec.id);
    ASSERT_GT(t.role_ns, 0);
    // the role chunk went out at once, the first token after prefill (>= 5 ms later)
    EXPECT_GT(ms(t.events.front().first - t.role_ns), 4.0);
    EXPECT_GT(ms(rec.stream.deliveries.front().t_ns - rec.start_ns), 4.0);
    // vLLM's first chunk is the role-only one
    ASSERT_FALSE(rec.stream.choice_times.empty());
    EXPECT_LT(rec.stream.choice_times.front(), rec.stream.deliveries.front().t_ns);
    EXPECT_EQ(rec.stream.choice_times.size(), t.events.size() + 1);
  }
  EXPECT_LT(r->metrics.ttft.mean + 3.0, r->metrics.ttft_content.mean);
}

// A client busy elsewhere (a 30 ms stall on the loop after each finished request) must still
// record when the bytes arrived: kernel receive timestamps keep every delivery within a few ms
// of the server's send, while read timestamps carry the stall.
TEST(client_sim, kernel_timestamps_are_immune_to_a_busy_loop) {
  auto worst_error = [](bool kernel, std::string* source) {
    sim_server s({"--decode-step-ms", "2", "--max-batch", "64"});
    client_config c = base_config(s, 8, 16, 40);
    c.dataset.range_ratio = 0.5;  // different lengths: streams finish while others run
    c.kernel_timestamps = kernel;
    client_hooks h;
    h.on_progress = [](size_t, size_t) {
      int64_t until = monotonic_ns() + 30000000;
      while (monotonic_ns() < until) {
      }
    };
    auto r = run_client(c, h);
    EXPECT_TRUE(r.ok());
    if (!r.ok()) return 0.0;
    *source = r->metrics.timestamp_source;
    auto gt = s.read_truth();
    // each delivery against the send time of the last event it carried (events queued behind a
    // stall arrive in one read)
    double worst = 0;
    for (const auto& rec : r->records) {
      const truth& t = gt.at(rec.id);
      size_t j = 0;
      for (const auto& d : rec.stream.deliveries) {
        j += static_cast<size_t>(d.events);
        if (j == 0 || j > t.events.size()) break;
        worst = std::max(worst, ms(d.t_ns - t.events[j - 1].first));
      }
    }
    return worst;
  };
  std::string src;
  double with_read = worst_error(false, &src);
  EXPECT_EQ(src, "read");
  EXPECT_GT(with_read, 20.0) << "the stall shows in read timestamps";
  double with_kernel = worst_error(true, &src);
  if (src != "kernel") GTEST_SKIP() << "this kernel gives no TCP receive timestamps (" << src << ")";
  EXPECT_LT(with_kernel, 5.0) << "kernel timestamps: the stall does not show";
}

TEST(client_sim, aborted_streams_and_http_errors_are_failures_with_reasons) {
  sim_server s({"--decode-step-ms", "2", "--abort-every", "3", "--abort-after-tokens", "2", "--error-every", "4",
                "--error-status", "503"});
  client_config c = base_config(s, 12, 8, 6);
  c.max_concurrency = 1;  // deterministic request order on the server
  auto r = run_client(c);
  ASSERT_TRUE(r.ok()) << r.get_status().to_string();
  size_t aborted = 0, http = 0;
  for (const auto& rec : r->records) {
    if (rec.success) continue;
    if (rec.http_status == 503) {
      ++http;
      EXPECT_NE(rec.error.find("HTTP 503"), std::string::npos) << rec.error;
      EXPECT_NE(rec.error.find("simulated failure"), std::string::npos) << rec.error;
    } else {
      ++aborted;
      EXPECT_NE(rec.error.find("stream aborted"), std::string::npos) << rec.error;
      EXPECT_EQ(rec.stream.content_events, 2u);  // partial data kept
    }
  }
  // server order 1..12: errors at 4, 8, 12; aborts at 3, 6, 9 (not 12: it was an error)
  EXPECT_EQ(http, 3u);
  EXPECT_EQ(aborted, 3u);
  EXPECT_EQ(r->metrics.completed, 6u);
  EXPECT_EQ(r->metrics.failed, 6u);
  EXPECT_EQ(r->vllm_json["errors"].size(), 12u);
  (void)check_against_truth(*r, s.read_truth(), true);
}

TEST(client_sim, keep_alive_connections_are_reused) {
  sim_server s({"--decode-step-ms", "1"});
  client_config c = base_config(s, 5, 4, 2);
  c.max_concurrency = 1;
  auto r = run_client(c);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->records[0].reused_connection);
  for (size_t i = 1; i < 5; ++i) EXPECT_TRUE(r->records[i].reused_connection) << i;
}

TEST(client_sim, poisson_arrivals_are_followed_and_queueing_is_visible) {
  sim_server s({"--decode-step-ms", "1"});
  client_config c = base_config(s, 40, 4, 2);
  c.arrivals.request_rate = 200;
  c.arrivals.seed = 5;
  c.metrics.requested_rate = 200;
  auto r = run_client(c);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->metrics.completed, 40u);
  EXPECT_NEAR(r->metrics.achieved_request_rate, r->metrics.scheduled_request_rate, 0.1 * r->metrics.scheduled_request_rate);
  EXPECT_LT(r->metrics.queue_time.median, 1.0);  // the loop sends on time
  EXPECT_LT(r->metrics.schedule_slip.median, 1.0);
  EXPECT_EQ(r->metrics.schedule_slip.n, 40u);
  for (const auto& rec : r->records) {
    EXPECT_GE(rec.arrival_ns, rec.scheduled_ns);
    EXPECT_GE(rec.start_ns, rec.arrival_ns);
  }
}

TEST(client_sim, server_dying_mid_run_keeps_partial_results) {
  sim_server s({"--decode-step-ms", "5", "--die-after-requests", "4", "--die-delay-ms", "12"});
  client_config c = base_config(s, 10, 4, 20);
  c.max_concurrency = 2;
  auto r = run_client(c);
  ASSERT_TRUE(r.ok()) << r.get_status().to_string();
  EXPECT_EQ(r->metrics.completed + r->metrics.failed, 10u);
  EXPECT_GE(r->metrics.failed, 6u);
  bool saw_cut = false, saw_refused = false;
  for (const auto& rec : r->records) {
    if (rec.success) continue;
    saw_cut = saw_cut || rec.error.find("stream aborted") != std::string::npos;
    saw_refused = saw_refused || rec.error.find("connect to") != std::string::npos;
  }
  EXPECT_TRUE(saw_cut);
  EXPECT_TRUE(saw_refused);
}

TEST(client_sim, request_timeout_and_abort_hook) {
  sim_server s({"--decode-step-ms", "50"});
  client_config c = base_config(s, 3, 4, 100);
  c.limits.request_timeout_s = 0.2;
  auto r = run_client(c);
  ASSERT_TRUE(r.ok());
  for (const auto& rec : r->records) EXPECT_NE(rec.error.find("timed out after 0.2 s"), std::string::npos) << rec.error;
  client_config c2 = base_config(s, 6, 4, 100);
  c2.max_concurrency = 2;
  client_hooks h;
  int64_t t_stop = monotonic_ns() + 300000000;
  h.abort_check = [&]() { return monotonic_ns() > t_stop ? std::string("server exited") : std::string(); };
  auto r2 = run_client(c2, h);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->aborted, "server exited");
  size_t not_sent = 0;
  for (const auto& rec : r2->records) not_sent += rec.error == "not sent: server exited";
  EXPECT_EQ(not_sent, 4u);
  EXPECT_EQ(r2->metrics.failed, 6u);
}

// Building a large run (records, bodies) happens before the schedule origin: the first
// arrival is not late by the build time (creating 100000 request records takes ~20-30 ms).
// All requests are due at once through one slot; the run stops once the first has finished.
TEST(client_sim, first_arrival_is_not_late_by_the_build_time) {
  sim_server s({"--decode-step-ms", "0"});
  client_config c = base_config(s, 100000, 1, 1);
  c.max_concurrency = 1;
  c.arrivals.request_rate = 1e9;
  c.arrivals.burstiness = INFINITY;
  client_hooks h;
  bool first_done = false;
  h.on_progress = [&](size_t done, size_t) { first_done = done >= 1; };
  h.abort_check = [&]() { return first_done ? std::string("enough") : std::string(); };
  int64_t before = monotonic_ns();
  auto r = run_client(c, h);
  ASSERT_TRUE(r.ok()) << r.get_status().message();
  const request_record& first = r->records.front();
  ASSERT_GT(first.arrival_ns, 0);
  double build_ms = ms(r->t0_ns - before);  // dataset, bodies and records (plus the 1 ms lead)
  double slip_ms = ms(first.arrival_ns - first.scheduled_ns);
  // Late by the build time is the bug (slip ≈ build_ms); scheduling jitter on a loaded 2-core CI
  // machine reached 27 ms once, against a 669 ms build.
  EXPECT_LT(slip_ms, 5.0 + 0.1 * build_ms) << "first arrival " << slip_ms << " ms late; the run took " << build_ms
                                            << " ms to build";
  EXPECT_GE(r->metrics.completed, 1u);
}

TEST(client_sim, warmup_failure_is_a_clear_error) {
  sim_server s({"--error-every", "1"});
  client_config c = base_config(s, 3, 4, 2);
  c.num_warmups = 2;
  auto r = run_client(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.get_status().message().find("every warm-up request failed"), std::string::npos);
  EXPECT_NE(r.get_status().message().find("HTTP 500"), std::string::npos) << r.get_status().message();
}

TEST(client_sim, model_name_from_v1_models) {
  sim_server s({"--model", "my-served-model", "--decode-step-ms", "1"});
  client_config c = base_config(s, 2, 4, 2);
  c.model.clear();
  auto r = run_client(c);
  ASSERT_TRUE(r.ok()) << r.get_status().to_string();
  EXPECT_EQ(r->model, "my-served-model");
}

TEST(client_sim, http_call_errors) {
  endpoint_url dead;
  dead.port = 1;  // nothing listens on port 1
  auto r = http_call(dead, "GET", "/health", "", 1.0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.get_status().code(), status_code::unavailable);
  status p = probe_connect(dead, 1.0);
  EXPECT_EQ(p.code(), status_code::unavailable);
  EXPECT_NE(p.message().find("http://127.0.0.1:1"), std::string::npos) << p.message();
}

TEST(client_sim, probe_connect_reaches_a_listening_server) {
  sim_server s({"--decode-step-ms", "1"});
  EXPECT_TRUE(probe_connect(s.url(), 2.0).ok());
}

// An exception outside any one request (here the progress hook) stops the run as an abort:
// finished requests are kept, the rest are marked, nothing escapes run_client.
TEST(client_sim, an_exception_in_a_hook_stops_the_run_with_the_results_kept) {
  sim_server s({"--decode-step-ms", "1"});
  client_config c = base_config(s, 20, 4, 4);
  c.max_concurrency = 1;
  client_hooks h;
  h.on_progress = [](size_t done, size_t) {
    if (done == 3) throw std::runtime_error("boom");
  };
  auto r = run_client(c, h);
  ASSERT_TRUE(r.ok()) << r.get_status().to_string();
  EXPECT_EQ(r->aborted, "client error: boom");
  EXPECT_EQ(r->metrics.completed, 3u);
  size_t not_sent = 0;
  for (const auto& rec : r->records) not_sent += rec.error == "not sent: client error: boom";
  EXPECT_EQ(not_sent, 17u);
}

}  // namespace
}  // namespace magpie::serve
