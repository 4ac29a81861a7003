#include "kernel/correctness.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/strings.h"

namespace magpie::kernel {

tolerance tolerance_for(dtype t, const correctness_policy& p) {
  switch (t) {
    case dtype::f32: return p.fp32;
    case dtype::f16: return p.fp16;
    case dtype::bf16: return p.bf16;
    case dtype::f64: return p.fp64;
    default: return {0, 0};
  }
}

tensor_diff compare_tensor(const std::string& name, const tensor& ref, const tensor& got, const tolerance& tol) {
  tensor_diff d;
  d.name = name;
  d.dtype = dtype_name(got.type);
  d.shape = got.shape;
  d.numel = got.numel();
  d.atol = tol.atol;
  d.rtol = tol.rtol;
  if (ref.shape != got.shape || ref.type != got.type) return d;  // caller reports the mismatch
  double sum_abs = 0, sum_rel = 0;
  size_t finite = 0, rel_n = 0;
  for (size_t i = 0; i < d.numel; ++i) {
    double r = ref.at(i), c = got.at(i);
    bool rn = std::isnan(r), cn = std::isnan(c);
    bool bad = false;
    if (rn || cn) {
      bad = rn != cn;
      if (bad) ++d.nan_mismatch;
    } else if (std::isinf(r) || std::isinf(c)) {
      bad = r != c;
      if (bad) ++d.nan_mismatch;
    } else {
      double a = std::fabs(c - r);
      ++finite;
      sum_abs += a;
      d.max_abs = std::max(d.max_abs, a);
      if (r != 0) {
        double rel = a / std::fabs(r);
        sum_rel += rel;
        ++rel_n;
        d.max_rel = std::max(d.max_rel, rel);
      }
      bad = a > tol.atol + tol.rtol * std::fabs(r);
      if (bad) ++d.mismatches;
    }
    if (bad && d.first_bad < 0) {
      d.first_bad = static_cast<int64_t>(i);
      d.first_ref = r;
      d.first_got = c;
    }
  }
  d.mean_abs = finite ? sum_abs / static_cast<double>(finite) : 0;
  d.mean_rel = rel_n ? sum_rel / static_cast<double>(rel_n) : 0;
  return d;
}

bool all_zero(const tensor& t) {
  for (size_t i = 0; i < t.numel(); ++i)
    if (t.at(i) != 0.0) return false;
  return t.numel() > 0;
}

bool all_constant(const tensor& t, double* value) {
  if (t.numel() < 2) return false;
  double v0 = t.at(0);
  for (size_t i = 1; i < t.numel(); ++i) {
    double v = t.at(i);
    if (!(v == v0 || (std::isnan(v) && std::isnan(v0)))) return false;
  }
  if (value) *value = v0;
  return true;
}

bool same_values(const tensor& a, const tensor& b) {
  if (a.numel() != b.numel() || a.numel() == 0) return false;
  for (size_t i = 0; i < a.numel(); ++i) {
    double x = a.at(i), y = b.at(i);
    if (!(x == y || (std::isnan(x) && std::isnan(y)))) return false;
  }
  return true;
}

bool same_bytes(const tensor& a, const tensor& b) {
  return a.type == b.type && a.shape == b.shape && a.data == b.data;
}

uint64_t tensor_digest(const tensor& t) {
  std::string head = std::string(dtype_name(t.type)) + shape_to_string(t.shape);
  uint64_t h = std::hash<std::string_view>{}(head);
  uint64_t d = std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(t.data.data()), t.data.size()));
  return h ^ (d + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2));
}

std::vector<size_t> probe_indices(uint64_t seed, size_t count, size_t numel) {
  std::vector<size_t> idx;
  if (numel <= count) {
    for (size_t i = 0; i < numel; ++i) idx.push_back(i);
    return idx;
  }
  auto mix = [](uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  for (size_t j = 0; j < count; ++j) idx.push_back(static_cast<size_t>(mix(seed + (j + 1) * 0x9E3779B97F4A7C15ull) % numel));
  return idx;
}

tensor gather(const tensor& t, const std::vector<size_t>& idx) {
  tensor g;
  g.type = t.type;
  g.shape = {static_cast<int64_t>(idx.size())};
  const size_t es = dtype_size(t.type);
  g.data.resize(idx.size() * es);
  for (size_t j = 0; j < idx.size(); ++j)
    if (idx[j] < t.numel()) std::memcpy(g.data.data() + j * es, t.data.data() + idx[j] * es, es);
  return g;
}

}  // namespace magpie::kernel
