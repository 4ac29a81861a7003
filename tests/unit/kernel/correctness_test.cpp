#include "kernel/correctness.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace magpie;
using namespace magpie::kernel;

namespace {
tensor f32(std::vector<float> v) {
  tensor t;
  t.type = dtype::f32;
  t.shape = {static_cast<int64_t>(v.size())};
  t.data.resize(v.size() * 4);
  std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}
}  // namespace

TEST(correctness, tolerance_is_atol_plus_rtol_times_ref) {
  tensor r = f32({1.0f, 100.0f, -2.0f});
  tensor ok = f32({1.00015f, 100.008f, -2.0002f});  // within 1e-4 + 1e-4*|r|
  auto d = compare_tensor("c", r, ok, {1e-4, 1e-4});
  EXPECT_EQ(d.mismatches, 0u);
  tensor bad = f32({1.0f, 100.05f, -2.0f});
  d = compare_tensor("c", r, bad, {1e-4, 1e-4});
  EXPECT_EQ(d.mismatches, 1u);
  EXPECT_EQ(d.first_bad, 1);
  EXPECT_NEAR(d.max_abs, 0.05, 1e-3);
}

TEST(correctness, nan_pattern_must_match) {
  tensor r = f32({1.0f, NAN, 3.0f});
  auto d = compare_tensor("c", r, f32({1.0f, NAN, 3.0f}), {0, 0});
  EXPECT_EQ(d.nan_mismatch, 0u);
  d = compare_tensor("c", r, f32({1.0f, 2.0f, NAN}), {1, 1});
  EXPECT_EQ(d.nan_mismatch, 2u);
  d = compare_tensor("c", f32({INFINITY}), f32({-INFINITY}), {1e9, 1e9});
  EXPECT_EQ(d.nan_mismatch, 1u);
}

TEST(correctness, degenerate_detectors) {
  EXPECT_TRUE(all_zero(f32({0, 0, 0})));
  EXPECT_FALSE(all_zero(f32({0, 1e-30f})));
  double v = 0;
  EXPECT_TRUE(all_constant(f32({2, 2, 2}), &v));
  EXPECT_DOUBLE_EQ(v, 2.0);
  EXPECT_FALSE(all_constant(f32({2, 2, 3}), &v));
  EXPECT_TRUE(same_values(f32({1, NAN}), f32({1, NAN})));
  EXPECT_FALSE(same_values(f32({1, 2}), f32({1, 3})));
}

TEST(correctness, integer_outputs_are_exact) {
  correctness_policy p;
  tolerance t = tolerance_for(dtype::i32, p);
  EXPECT_EQ(t.atol, 0);
  EXPECT_EQ(t.rtol, 0);
  EXPECT_DOUBLE_EQ(tolerance_for(dtype::bf16, p).atol, 1e-2);
  EXPECT_DOUBLE_EQ(tolerance_for(dtype::f32, p).rtol, 1e-4);
}

TEST(correctness, bfloat16_values_decode) {
  tensor t;
  t.type = dtype::bf16;
  t.shape = {2};
  uint16_t v[2] = {0x3f80, 0xc000};  // 1.0, -2.0
  t.data.resize(4);
  std::memcpy(t.data.data(), v, 4);
  EXPECT_DOUBLE_EQ(t.at(0), 1.0);
  EXPECT_DOUBLE_EQ(t.at(1), -2.0);
}
