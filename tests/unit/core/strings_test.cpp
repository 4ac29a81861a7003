#include "core/strings.h"
#include "core/subprocess.h"
#include "core/utf8.h"

#include <gtest/gtest.h>

using namespace magpie;

TEST(strings, split_whitespace_drops_runs) {
  auto v = split_whitespace("  nvcc  -O3\n -o  out \t");
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0], "nvcc");
  EXPECT_EQ(v[3], "out");
  EXPECT_TRUE(split_whitespace("   ").empty());
}

TEST(strings, split_keeps_empty_fields) {
  auto v = split("a,,b,", ',');
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[1], "");
  EXPECT_EQ(v[3], "");
}

TEST(strings, parse_numbers_strictly) {
  EXPECT_EQ(parse_int("42").value(), 42);
  EXPECT_FALSE(parse_int("42x").has_value());
  EXPECT_FALSE(parse_int("").has_value());
  EXPECT_DOUBLE_EQ(parse_double(" 1.5e3 ").value(), 1500.0);
  EXPECT_FALSE(parse_double("1.5.3").has_value());
}

TEST(strings, sanitize_label_maps_unsafe_characters) {
  EXPECT_EQ(sanitize_label("my kernel/v2.cu"), "my_kernel_v2_cu");
  EXPECT_EQ(sanitize_label("ok-name_1"), "ok-name_1");
}

TEST(strings, shell_quote_only_for_display) {
  EXPECT_EQ(shell_quote("plain"), "plain");
  EXPECT_EQ(shell_quote("has space"), "'has space'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

TEST(strings, format_duration_picks_unit) {
  EXPECT_EQ(format_duration_ns(500), "500.0 ns");
  EXPECT_EQ(format_duration_ns(12345), "12.345 us");
  EXPECT_EQ(format_duration_ns(2.5e9), "2.500 s");
}

TEST(strings, utf8_prefix_never_cuts_a_character) {
  const std::string s = "ab\xe2\x80\x94" "cd";  // "ab—cd": the dash is 3 bytes at [2, 5)
  EXPECT_EQ(utf8_prefix(s, 2), "ab");
  EXPECT_EQ(utf8_prefix(s, 3), "ab");
  EXPECT_EQ(utf8_prefix(s, 4), "ab");
  EXPECT_EQ(utf8_prefix(s, 5), "ab\xe2\x80\x94");
  EXPECT_EQ(utf8_prefix(s, 100), s);
  EXPECT_EQ(utf8_prefix("", 3), "");
}

TEST(strings, printable_text_escapes_controls_and_repairs_utf8) {
  EXPECT_EQ(printable_text("ok\tline\nnext \xe2\x80\x94 done"), "ok\tline\nnext \xe2\x80\x94 done");  // unchanged
  EXPECT_EQ(printable_text("\x1b[31mred\x1b[0m"), "\\x1B[31mred\\x1B[0m");  // no terminal escapes
  EXPECT_EQ(printable_text(std::string_view("a\rb\x7f\0" "c", 6)), "a\\x0Db\\x7F\\x00c");
  EXPECT_EQ(printable_text("bad \xff\xfe cut \xe2\x82"), "bad \xef\xbf\xbd\xef\xbf\xbd cut \xef\xbf\xbd");
}

TEST(strings, output_tail_is_printable) {
  run_result r;
  r.err = "x\x1b]0;title\x07";
  r.err.append(3000, 'y');
  r.err.append("\xe2\x80\x94\xc3");
  std::string t = r.output_tail(10);
  EXPECT_EQ(t, "...yyyyyy\xe2\x80\x94\xef\xbf\xbd");  // the last 10 bytes, repaired
  r.err = "\x1b[2J";
  EXPECT_EQ(r.output_tail(), "\\x1B[2J");
}

TEST(strings, edit_distance_and_closest_match) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("--top-k", "--topk"), 1u);
  EXPECT_EQ(closest_match("--ouput-dir", {"--output-dir", "--out"}), "--output-dir");
  EXPECT_EQ(closest_match("KERNELS", {"kernel", "kernels"}), "kernels");
  EXPECT_EQ(closest_match("xyz", {"kernels", "timing"}), "");
  EXPECT_EQ(did_you_mean("timng", {"timing"}), " (did you mean 'timing'?)");
  EXPECT_EQ(did_you_mean("q", {"timing"}), "");
}
