#include "core/strings.h"
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
