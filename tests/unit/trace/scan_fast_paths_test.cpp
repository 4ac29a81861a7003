// The reader's fast paths against the general ones they stand in for: the key recognisers of
// Kineto's `"key": ` layout against the decoded-key ones, and skip_array_fast against the
// token-by-token validator. A fast path may decline anything, but what it accepts must be what
// the general path gives.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "trace/event_keys.h"
#include "trace/json_scan.h"

namespace magpie::trace::detail {
namespace {

/// `"key": ` + value text, padded so the fast recognisers may read k_key_fast_bytes.
std::string raw_key(std::string_view key, std::string_view rest) {
  std::string s = "\"" + std::string(key) + "\"" + std::string(rest);
  s.append(k_key_fast_bytes + 8, ' ');
  return s;
}

template <typename Key, size_t N>
void expect_recognisers_agree(const std::string_view (&names)[N], Key (*of)(std::string_view), Key (*at)(const char*&)) {
  for (size_t i = 1; i < N; ++i) {
    const Key k = static_cast<Key>(i);
    std::string_view name = names[i];
    EXPECT_EQ(of(name), k) << name;
    std::string s = raw_key(name, ": 7,");
    const char* q = s.data();
    EXPECT_EQ(at(q), k) << name;
    EXPECT_EQ(*q, '7') << name;  // q moved to the value
    // Any other layout or a different key is left to the general path (q unchanged).
    for (std::string_view rest : {":7,", ":  7", ": \n7", " : 7", ":\t7"}) {
      std::string t = raw_key(name, rest);
      const char* r = t.data();
      EXPECT_EQ(at(r), Key::other) << name << " with " << rest;
      EXPECT_EQ(r, t.data());
    }
    std::string longer = std::string(name) + "x", shorter(name.substr(0, name.size() - 1));
    std::string changed(name);
    changed[changed.size() / 2] ^= 0x20;  // one byte in the middle (the words' overlap)
    for (const std::string& other : {longer, shorter, changed}) {
      std::string t = raw_key(other, ": 7,");
      const char* r = t.data();
      EXPECT_EQ(at(r), of(other)) << other;
      EXPECT_EQ(of(other), Key::other) << other;
    }
  }
  EXPECT_EQ(of(""), Key::other);
}

TEST(EventKeys, FastAndDecodedRecognisersAgreeOnEveryKey) {
  expect_recognisers_agree(k_event_key_names, &event_key_of, &event_key_at);
  expect_recognisers_agree(k_arg_key_names, &arg_key_of, &arg_key_at);
}

/// skip_value_general on the whole text (final window): ok and the end offset, or bad.
std::pair<scan, size_t> general(const std::string& text) {
  scan_ctx ctx;
  ctx.end = text.data() + text.size();
  ctx.final = true;
  const char* p = text.data();
  scan r = skip_value_general(p, ctx, nullptr);
  return {r, static_cast<size_t>(p - text.data())};
}

TEST(SkipArrayFast, TakesKinetoArraysAndEndsWhereTheGeneralPathEnds) {
  for (std::string a : {R"([[8192, 1024], [2, 48], [], [], []])", R"(["c10::BFloat16", "long int", "Scalar"])",
                        R"(["", "", "-1", "False"])", R"([96, 1, 1])", "[]", "[[[]]]", "[0.5,-0,-12.25, 3]",
                        R"([["a", [1, ["b"]]], 2])"}) {
    std::string text = a + ", \"next\": 1}";
    const char* e = skip_array_fast(text.data(), text.data() + text.size());
    ASSERT_NE(e, nullptr) << a;
    auto [r, end] = general(text.substr(0, a.size()));
    EXPECT_EQ(r, scan::ok) << a;
    EXPECT_EQ(static_cast<size_t>(e - text.data()), a.size()) << a;
    EXPECT_EQ(end, a.size()) << a;
  }
  // Declined (the general path decides): objects, literals, exponents, escapes, other
  // whitespace, a window that ends inside, invalid text.
  for (std::string a : {R"([{"a": 1}])", "[true]", "[null]", "[1e5]", R"(["a\"b"])", "[ 1]", "[1 ]", "[1,\n2]",
                        "[1,  2]", "[1, 2", "[01]", "[1.]", "[-]", "[1,]", "[,1]", "[1 2]", "[\"\x01\"]", "[.5]",
                        "[+1]", "[1]]"}) {
    const char* e = skip_array_fast(a.data(), a.data() + a.size());
    if (e) {  // "[1]]": the array ends after "[1]", as the general path says
      auto [r, end] = general(a.substr(0, static_cast<size_t>(e - a.data())));
      EXPECT_EQ(r, scan::ok) << a;
      EXPECT_EQ(end, static_cast<size_t>(e - a.data())) << a;
    }
  }
  std::string deep(65, '['), deep_end(65, ']');
  EXPECT_EQ(skip_array_fast(deep.data(), deep.data() + deep.size()), nullptr);
  std::string ok64 = std::string(64, '[') + std::string(64, ']');
  EXPECT_EQ(skip_array_fast(ok64.data(), ok64.data() + ok64.size()), ok64.data() + ok64.size());
}

// Random texts over the bytes that matter: whatever skip_array_fast accepts, the general
// validator accepts with the same end.
TEST(SkipArrayFast, NeverAcceptsWhatTheGeneralPathRejects) {
  const std::vector<std::string> tokens = {"[", "]", ",", ", ", " ", "0", "1", "9", "-", ".", "e", "E", "+",
                                           "\"", "\"a\"", "\"\\n\"", "\\", "{", "}", ":", "t", "true", "\n", "\x01"};
  std::mt19937 rng(12345);
  size_t accepted = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string s = "[";
    int n = 1 + static_cast<int>(rng() % 12);
    for (int j = 0; j < n; ++j) s += tokens[rng() % tokens.size()];
    const char* e = skip_array_fast(s.data(), s.data() + s.size());
    if (!e) continue;
    ++accepted;
    size_t len = static_cast<size_t>(e - s.data());
    auto [r, end] = general(s.substr(0, len));
    ASSERT_EQ(r, scan::ok) << s;
    ASSERT_EQ(end, len) << s;
    // With the rest of the text after it, the general path ends the value at the same byte.
    scan_ctx ctx;
    ctx.end = s.data() + s.size();
    ctx.final = true;
    const char* p = s.data();
    ASSERT_EQ(skip_value_general(p, ctx, nullptr), scan::ok) << s;
    ASSERT_EQ(p, e) << s;
  }
  EXPECT_GT(accepted, 1000u);  // the generator does reach the accepting paths
}

}  // namespace
}  // namespace magpie::trace::detail
