#include "serve/openai_stream.h"

#include <gtest/gtest.h>

namespace magpie::serve {
namespace {

std::string ev(const std::string& json) { return "data: " + json + "\n\n"; }

TEST(openai_stream, chat_role_only_first_chunk_is_not_a_token) {
  openai_stream_decoder d(api_kind::chat);
  d.on_body(ev(R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})"), 100);
  d.on_body(ev(R"({"choices":[{"index":0,"delta":{"content":"Hi"}}]})"), 200);
  d.on_body(ev(R"({"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"length"}]})"), 300);
  d.on_body(ev(R"({"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2}})") + ev("[DONE]"), 400);
  const auto& r = d.result();
  ASSERT_EQ(r.deliveries.size(), 2u);
  EXPECT_EQ(r.deliveries[0].t_ns, 200);
  EXPECT_EQ(r.deliveries[1].t_ns, 300);
  EXPECT_EQ(r.role_only_events, 1u);
  EXPECT_TRUE(r.done);
  EXPECT_EQ(r.prompt_tokens, 7);
  EXPECT_EQ(r.completion_tokens, 2);
  EXPECT_EQ(r.finish_reason, "length");
  std::string src;
  EXPECT_EQ(output_token_count(r, &src), 2);
  EXPECT_EQ(src, "usage");
}

TEST(openai_stream, continuous_usage_gives_token_counts_per_delivery) {
  openai_stream_decoder d(api_kind::completions);
  d.on_body(ev(R"({"choices":[{"text":"a b c"}],"usage":{"prompt_tokens":5,"completion_tokens":3}})"), 10);
  d.on_body(ev(R"({"choices":[{"text":" d"}],"usage":{"prompt_tokens":5,"completion_tokens":4}})"), 20);
  // tokens whose text is withheld still count (usage grows, text empty)
  d.on_body(ev(R"({"choices":[{"text":""}],"usage":{"prompt_tokens":5,"completion_tokens":6}})"), 30);
  const auto& r = d.result();
  ASSERT_EQ(r.deliveries.size(), 3u);
  EXPECT_EQ(r.deliveries[0].tokens, 3);
  EXPECT_EQ(r.deliveries[1].tokens, 1);
  EXPECT_EQ(r.deliveries[2].tokens, 2);
  EXPECT_FALSE(r.done);
}

TEST(openai_stream, coalesced_events_in_one_read_form_one_delivery) {
  openai_stream_decoder d(api_kind::completions, true);
  std::string both = ev(R"({"choices":[{"text":"x"}],"usage":{"completion_tokens":1}})") +
                     ev(R"({"choices":[{"text":"y"}],"usage":{"completion_tokens":2}})");
  d.on_body(both, 50);
  const auto& r = d.result();
  ASSERT_EQ(r.deliveries.size(), 1u);
  EXPECT_EQ(r.deliveries[0].tokens, 2);
  EXPECT_EQ(r.deliveries[0].events, 2);
  EXPECT_EQ(r.coalesced_events, 1u);
  EXPECT_EQ(r.text, "xy");
}

TEST(openai_stream, event_split_across_reads_is_stamped_with_the_completing_read) {
  openai_stream_decoder d(api_kind::completions);
  std::string e = ev(R"({"choices":[{"text":"tok"}]})");
  d.on_body(e.substr(0, 10), 1);
  EXPECT_TRUE(d.result().deliveries.empty());
  EXPECT_TRUE(d.has_partial_event());
  d.on_body(e.substr(10), 2);
  ASSERT_EQ(d.result().deliveries.size(), 1u);
  EXPECT_EQ(d.result().deliveries[0].t_ns, 2);
  EXPECT_EQ(d.result().deliveries[0].tokens, -1);
  std::string src;
  EXPECT_EQ(output_token_count(d.result(), &src), 1);
  EXPECT_EQ(src, "chunks");
}

TEST(openai_stream, error_events_and_malformed_data_are_reported) {
  openai_stream_decoder a(api_kind::completions);
  a.on_body(ev(R"({"object":"error","message":"KV cache full","type":"InternalServerError","code":500})"), 1);
  EXPECT_EQ(a.result().error, "KV cache full");
  openai_stream_decoder b(api_kind::chat);
  b.on_body(ev(R"({"error":{"message":"boom"}})"), 1);
  EXPECT_EQ(b.result().error, "boom");
  openai_stream_decoder c(api_kind::chat);
  c.on_body(ev("{not json"), 1);
  EXPECT_NE(c.result().error.find("malformed SSE data"), std::string::npos);
}

TEST(openai_stream, reasoning_content_counts_as_tokens) {
  openai_stream_decoder d(api_kind::chat);
  d.on_body(ev(R"({"choices":[{"delta":{"reasoning_content":"think"}}]})"), 5);
  d.on_body(ev(R"({"choices":[{"delta":{"reasoning":"more"}}]})"), 6);
  EXPECT_EQ(d.result().deliveries.size(), 2u);
}

}  // namespace
}  // namespace magpie::serve
