#include "serve/sse.h"

#include <gtest/gtest.h>

namespace magpie::serve {
namespace {

std::vector<sse_event> parse_in_pieces(const std::string& s, size_t piece) {
  sse_parser p;
  std::vector<sse_event> out;
  for (size_t i = 0; i < s.size(); i += piece) p.feed(std::string_view(s).substr(i, piece), out);
  return out;
}

TEST(sse_parser, splits_at_every_position_give_the_same_events) {
  const std::string stream =
      "data: {\"a\":1}\n\n"
      ": keep-alive comment\r\n\r\n"
      "event: message\r\ndata: line1\r\ndata: line2\r\n\r\n"
      "data:nospace\r\r"
      "data: [DONE]\n\n";
  std::vector<sse_event> whole = parse_in_pieces(stream, stream.size());
  ASSERT_EQ(whole.size(), 4u);
  EXPECT_EQ(whole[0].data, "{\"a\":1}");
  EXPECT_EQ(whole[1].event, "message");
  EXPECT_EQ(whole[1].data, "line1\nline2");
  EXPECT_EQ(whole[2].data, "nospace");
  EXPECT_EQ(whole[3].data, "[DONE]");
  for (size_t piece = 1; piece < stream.size(); ++piece) {
    auto ev = parse_in_pieces(stream, piece);
    ASSERT_EQ(ev.size(), whole.size()) << "piece " << piece;
    for (size_t i = 0; i < ev.size(); ++i) {
      EXPECT_EQ(ev[i].data, whole[i].data) << "piece " << piece;
      EXPECT_EQ(ev[i].event, whole[i].event);
    }
  }
}

TEST(sse_parser, crlf_split_between_cr_and_lf_is_one_line_end) {
  sse_parser p;
  std::vector<sse_event> out;
  p.feed("data: x\r", out);
  p.feed("\n\r", out);
  EXPECT_EQ(out.size(), 1u);  // "\r\n" ends the line, the lone "\r" is the blank line
  p.feed("\ndata: y\n\n", out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].data, "y");
}

TEST(sse_parser, unfinished_event_is_reported_as_partial) {
  sse_parser p;
  std::vector<sse_event> out;
  p.feed("data: {\"choices\":", out);
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(p.has_partial());
  p.feed("[]}\n", out);
  EXPECT_TRUE(p.has_partial());  // no blank line yet
  p.feed("\n", out);
  EXPECT_FALSE(p.has_partial());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(p.bytes_seen(), 22u);
}

TEST(sse_parser, blank_lines_without_data_dispatch_nothing) {
  sse_parser p;
  std::vector<sse_event> out;
  p.feed("\n\n\r\n: ping\n\nevent: x\n\n", out);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace magpie::serve
