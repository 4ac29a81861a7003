// Per-request limits of the serving client (serve/limits.h): the formulas, the SSE parser's
// event cap, the decoder's chunk cap and clipped strings, and the pre-flight file checks.
#include "serve/limits.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "core/fs.h"
#include "serve/openai_stream.h"
#include "serve/preflight.h"
#include "serve/sse.h"

namespace magpie::serve {
namespace {

std::string ev(const std::string& json) { return "data: " + json + "\n\n"; }

TEST(limits, defaults_follow_the_workload) {
  request_limits l = limits_for(limit_policy{}, 1000, 128);
  EXPECT_DOUBLE_EQ(l.timeout_s, 60.0 + 0.5 * 128 + 0.002 * 1000);
  EXPECT_TRUE(l.timeout_derived);
  EXPECT_EQ(l.max_event_bytes, (4u << 20) + 256u * 1000);
  EXPECT_EQ(l.max_response_bytes, l.max_event_bytes + (16u << 10) * 128);
  EXPECT_EQ(l.max_chunks, 8u * 128 + 256);
  // a bigger request gets proportionally more
  request_limits big = limits_for(limit_policy{}, 100000, 8192);
  EXPECT_GT(big.timeout_s, 4000.0);
  EXPECT_GT(big.max_response_bytes, 128u << 20);
  EXPECT_NE(timeout_reason(l).find("default per-request timeout"), std::string::npos);
}

TEST(limits, explicit_values_and_zero_mean_none) {
  limit_policy p;
  p.request_timeout_s = 2.5;
  p.max_event_bytes = 1000;
  p.max_response_bytes = 5000;
  request_limits l = limits_for(p, 10, 4);
  EXPECT_DOUBLE_EQ(l.timeout_s, 2.5);
  EXPECT_FALSE(l.timeout_derived);
  EXPECT_EQ(l.max_event_bytes, 1000u);
  EXPECT_EQ(l.max_response_bytes, 5000u);
  EXPECT_EQ(l.max_chunks, 8u * 4 + 256);
  EXPECT_EQ(timeout_reason(l), "timed out after 2.5 s (--request-timeout)");
  p = limit_policy{0, 0, 0};
  l = limits_for(p, 10, 4);
  EXPECT_EQ(l.timeout_s, 0.0);
  EXPECT_EQ(l.max_event_bytes, 0u);
  EXPECT_EQ(l.max_response_bytes, 0u);
  EXPECT_EQ(l.max_chunks, 0u);
}

TEST(limits, exchange_timeout_honours_request_timeout_and_time_left) {
  limit_policy p;
  EXPECT_DOUBLE_EQ(exchange_timeout_s(p, 1e9), k_timeout_base_s);
  EXPECT_DOUBLE_EQ(exchange_timeout_s(p, 5.0), 5.0);  // --timeout left
  p.request_timeout_s = 2.0;
  EXPECT_DOUBLE_EQ(exchange_timeout_s(p, 5.0), 2.0);
  EXPECT_DOUBLE_EQ(exchange_timeout_s(p, -3.0), 0.1);  // deadline passed: fail fast, never block
}

TEST(sse_parser, a_line_beyond_the_cap_stops_the_parser_and_frees_it) {
  for (size_t piece : {size_t(1), size_t(7), size_t(64), size_t(100000)}) {
    sse_parser p;
    p.set_max_event_bytes(64);
    std::vector<sse_event> out;
    std::string s = ev("{\"a\":1}") + "data: " + std::string(200, 'x');  // no newline ever
    for (size_t i = 0; i < s.size(); i += piece) p.feed(std::string_view(s).substr(i, piece), out);
    EXPECT_EQ(out.size(), 1u) << piece;
    EXPECT_TRUE(p.overflowed()) << piece;
    EXPECT_FALSE(p.has_partial()) << piece;  // nothing is held
    p.feed(ev("{\"b\":2}"), out);             // nothing more is reported after an overflow
    EXPECT_EQ(out.size(), 1u);
  }
}

TEST(sse_parser, many_data_lines_of_one_event_count_together) {
  sse_parser p;
  p.set_max_event_bytes(100);
  std::vector<sse_event> out;
  std::string lines;
  for (int i = 0; i < 20; ++i) lines += "data: 0123456789\n";
  p.feed(lines, out);
  EXPECT_TRUE(p.overflowed());
  EXPECT_TRUE(out.empty());
  sse_parser q;  // an event exactly at the cap passes
  q.set_max_event_bytes(21);
  q.feed("data: 0123456789\ndata: 0123456789\n\n", out);
  EXPECT_FALSE(q.overflowed());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data.size(), 21u);
}

TEST(openai_stream, limits_make_the_stream_fatal_and_keep_nothing_beyond) {
  openai_stream_decoder d(api_kind::completions);
  d.set_limits(1024, 3);
  for (int i = 0; i < 10; ++i) d.on_body(ev(R"({"choices":[{"text":"t"}]})"), 10 + i);
  EXPECT_EQ(d.result().choice_times.size(), 3u);
  EXPECT_EQ(d.result().deliveries.size(), 3u);
  EXPECT_NE(d.fatal().find("more than 3 choices chunks"), std::string::npos) << d.fatal();
  openai_stream_decoder e(api_kind::completions);
  e.set_limits(1024, 0);
  e.on_body("data: " + std::string(5000, 'x'), 1);
  EXPECT_NE(e.fatal().find("exceeded 1024 bytes (--max-event-bytes)"), std::string::npos) << e.fatal();
  EXPECT_FALSE(e.has_partial_event());
}

TEST(openai_stream, server_strings_are_clipped) {
  openai_stream_decoder d(api_kind::completions);
  std::string big(100000, 'r');
  d.on_body(ev(R"({"choices":[{"text":"a","finish_reason":")" + big + R"("}]})"), 1);
  d.on_body(ev(R"({"error":{"message":")" + big + R"("}})"), 2);
  EXPECT_LE(d.result().finish_reason.size(), 70u);
  EXPECT_LE(d.result().error.size(), 310u);
  EXPECT_EQ(d.result().deliveries.size(), 1u);
}

// A recursive JSON parser on a hostile event nested a million deep would overflow the stack.
TEST(openai_stream, deeply_nested_events_are_refused_without_recursion) {
  openai_stream_decoder d(api_kind::completions);
  d.on_body(ev(std::string(1000000, '[')), 1);
  d.on_body(ev(std::string(3000, '[') + std::string(3000, ']')), 2);  // small: parsed, not an object
  d.on_body(ev(R"({"choices":[{"text":")" + std::string(10000, 'a') + R"("}]})"), 3);  // large but flat: fine
  EXPECT_NE(d.result().error.find("nested deeper than 64 levels"), std::string::npos) << d.result().error;
  ASSERT_EQ(d.result().deliveries.size(), 1u);
  EXPECT_EQ(d.result().text_chars, 10000u);
}

TEST(openai_stream, implausible_usage_counts_are_ignored) {
  openai_stream_decoder d(api_kind::completions);
  d.on_body(ev(R"({"choices":[{"text":"a"}],"usage":{"prompt_tokens":-5,"completion_tokens":4611686018427387904}})"), 1);
  d.on_body(ev(R"({"choices":[{"text":"b"}],"usage":{"prompt_tokens":3,"completion_tokens":2}})"), 2);
  EXPECT_EQ(d.result().prompt_tokens, 3);
  EXPECT_EQ(d.result().completion_tokens, 2);
  ASSERT_EQ(d.result().deliveries.size(), 2u);
  EXPECT_EQ(d.result().deliveries[1].tokens, 2);
}

TEST(preflight, output_dir_must_be_writable_or_creatable) {
  auto tmp = make_temp_dir(fs::temp_directory_path(), "magpie_preflight");
  ASSERT_TRUE(tmp.ok());
  scoped_dir guard(*tmp);
  EXPECT_TRUE(check_output_dir(*tmp / "a" / "b").ok());  // created later, under a writable parent
  EXPECT_FALSE(fs::exists(*tmp / "a"));                     // the check itself writes nothing
  std::ofstream(*tmp / "file") << "x";
  auto st = check_output_dir(*tmp / "file" / "sub");
  EXPECT_EQ(st.code(), status_code::invalid_argument) << st.message();
  EXPECT_NE(st.message().find("is not a directory"), std::string::npos);
  if (::geteuid() != 0) {  // root may write anywhere
    fs::create_directory(*tmp / "ro");
    ::chmod((*tmp / "ro").c_str(), 0555);
    EXPECT_EQ(check_output_dir(*tmp / "ro" / "x").code(), status_code::failed_precondition);
  }
}

TEST(preflight, dataset_file_is_readable) {
  client_settings s;
  EXPECT_TRUE(check_dataset_file(s).ok());  // random: no file
  s.dataset_name = "custom";
  EXPECT_EQ(check_dataset_file(s).code(), status_code::invalid_argument);
  s.dataset_path = "/nonexistent/magpie/prompts.jsonl";
  auto st = check_dataset_file(s);
  EXPECT_EQ(st.code(), status_code::not_found);
  EXPECT_NE(st.message().find("--dataset-path /nonexistent/magpie/prompts.jsonl: No such file"), std::string::npos) << st.message();
  s.dataset_path = fs::temp_directory_path().string();
  EXPECT_FALSE(check_dataset_file(s).ok());  // a directory
  s.dataset_name = "bogus";
  EXPECT_EQ(check_dataset_file(s).code(), status_code::invalid_argument);
}

}  // namespace
}  // namespace magpie::serve
