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

namespace {

// The element-by-element definition of compare_tensor (tensor::at, one thread): what the typed,
// chunked scan must reproduce exactly, failures and first failing index included.
tensor_diff compare_by_definition(const tensor& ref, const tensor& got, const tolerance& tol) {
  tensor_diff d;
  for (size_t i = 0; i < got.numel(); ++i) {
    double r = ref.at(i), c = got.at(i);
    bool bad = false;
    if (std::isnan(r) || std::isnan(c)) {
      bad = std::isnan(r) != std::isnan(c);
      d.nan_mismatch += bad;
    } else if (std::isinf(r) || std::isinf(c)) {
      bad = r != c;
      d.nan_mismatch += bad;
    } else {
      double a = std::fabs(c - r);
      d.max_abs = std::max(d.max_abs, a);
      if (r != 0) d.max_rel = std::max(d.max_rel, a / std::fabs(r));
      bad = a > tol.atol + tol.rtol * std::fabs(r);
      d.mismatches += bad;
    }
    if (bad && d.first_bad < 0) d.first_bad = static_cast<int64_t>(i);
  }
  return d;
}

}  // namespace

// Issue 36: a 16M-element output is compared in chunks on several threads with a decoder per
// dtype. Same counts, maxima and first failing index as the definition, across chunk borders
// (3M elements: several chunks), with NaN/inf patterns and failures planted late in the tensor.
TEST(correctness, chunked_compare_equals_the_definition) {
  const size_t n = 3u << 20;
  std::vector<float> r(n), c(n);
  uint64_t z = 12345;
  for (size_t i = 0; i < n; ++i) {
    z = z * 6364136223846793005ull + 1442695040888963407ull;
    r[i] = static_cast<float>(static_cast<int64_t>(z >> 40) - (1 << 23)) / (1 << 20);
    c[i] = r[i] * (1.0f + 1e-6f);
  }
  const size_t late = n - 7, border = (1u << 20);  // a failure in the last chunk, one at a border
  c[late] = r[late] + 1.0f;
  c[border] = r[border] - 0.5f;
  r[border + 5] = NAN;                 // NaN in the reference only
  r[2 * border - 1] = c[2 * border - 1] = NAN;  // the same NaN on both sides: fine
  r[2 * border + 3] = INFINITY;
  c[2 * border + 3] = -INFINITY;       // an infinity that differs
  const tensor rt = f32(r), ct = f32(c);
  const tolerance tol{1e-5, 1e-5};
  tensor_diff fast = compare_tensor("c", rt, ct, tol), def = compare_by_definition(rt, ct, tol);
  EXPECT_EQ(fast.mismatches, def.mismatches);
  EXPECT_EQ(fast.mismatches, 2u);
  EXPECT_EQ(fast.nan_mismatch, def.nan_mismatch);
  EXPECT_EQ(fast.nan_mismatch, 2u);
  EXPECT_EQ(fast.first_bad, static_cast<int64_t>(border));
  EXPECT_EQ(fast.first_bad, def.first_bad);
  EXPECT_DOUBLE_EQ(fast.max_abs, def.max_abs);
  EXPECT_DOUBLE_EQ(fast.max_rel, def.max_rel);
  // Only the late failure left: found in the last chunk.
  c[border] = r[border];
  r[border + 5] = c[border + 5];
  c[2 * border + 3] = INFINITY;
  fast = compare_tensor("c", f32(r), f32(c), tol);
  EXPECT_EQ(fast.mismatches + fast.nan_mismatch, 1u);
  EXPECT_EQ(fast.first_bad, static_cast<int64_t>(late));
  // Fewer bytes than the shape says: nothing passes.
  tensor short_got = f32(c);
  short_got.data.resize(short_got.data.size() / 2);
  EXPECT_EQ(compare_tensor("c", rt, short_got, tol).mismatches, n);
}

TEST(correctness, typed_scans_for_every_dtype) {
  for (dtype t : {dtype::f16, dtype::bf16, dtype::f64, dtype::i8, dtype::u8, dtype::i16, dtype::u16, dtype::i32, dtype::u32,
                  dtype::i64, dtype::u64, dtype::boolean}) {
    tensor a;
    a.type = t;
    a.shape = {5};
    a.data.assign(5 * dtype_size(t), 0);
    EXPECT_TRUE(all_zero(a)) << dtype_name(t);
    double v = -1;
    EXPECT_TRUE(all_constant(a, &v)) << dtype_name(t);
    EXPECT_EQ(v, 0.0);
    tensor b = a;
    b.data[3 * dtype_size(t)] = 1;  // element 3 is no longer zero (lowest byte)
    EXPECT_FALSE(all_zero(b)) << dtype_name(t);
    EXPECT_FALSE(all_constant(b, nullptr)) << dtype_name(t);
    EXPECT_FALSE(same_values(a, b)) << dtype_name(t);
    EXPECT_TRUE(same_values(b, b)) << dtype_name(t);
    tensor_diff d = compare_tensor("x", a, b, {0, 0});
    EXPECT_EQ(d.mismatches, 1u) << dtype_name(t);
    EXPECT_EQ(d.first_bad, 3) << dtype_name(t);
    EXPECT_DOUBLE_EQ(d.first_got, b.at(3)) << dtype_name(t);
  }
}
