#include "kernel/correctness.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

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

namespace {

// A tensor's elements as double, decoded by one function per dtype (no switch per element).
// with_decoder(t, f) calls f(decode) with decode(const uint8_t* data, size_t i) -> double.
template <class F>
void with_decoder(dtype t, F&& f) {
  switch (t) {
    case dtype::f32: f([](const uint8_t* p, size_t i) { float v; std::memcpy(&v, p + 4 * i, 4); return static_cast<double>(v); }); return;
    case dtype::f64: f([](const uint8_t* p, size_t i) { double v; std::memcpy(&v, p + 8 * i, 8); return v; }); return;
    case dtype::f16: f([](const uint8_t* p, size_t i) { uint16_t v; std::memcpy(&v, p + 2 * i, 2); return half_to_double(v); }); return;
    case dtype::bf16: f([](const uint8_t* p, size_t i) { uint16_t v; std::memcpy(&v, p + 2 * i, 2); return bfloat16_to_double(v); }); return;
    case dtype::i8: f([](const uint8_t* p, size_t i) { return static_cast<double>(static_cast<int8_t>(p[i])); }); return;
    case dtype::u8: f([](const uint8_t* p, size_t i) { return static_cast<double>(p[i]); }); return;
    case dtype::boolean: f([](const uint8_t* p, size_t i) { return p[i] ? 1.0 : 0.0; }); return;
    case dtype::i16: f([](const uint8_t* p, size_t i) { int16_t v; std::memcpy(&v, p + 2 * i, 2); return static_cast<double>(v); }); return;
    case dtype::u16: f([](const uint8_t* p, size_t i) { uint16_t v; std::memcpy(&v, p + 2 * i, 2); return static_cast<double>(v); }); return;
    case dtype::i32: f([](const uint8_t* p, size_t i) { int32_t v; std::memcpy(&v, p + 4 * i, 4); return static_cast<double>(v); }); return;
    case dtype::u32: f([](const uint8_t* p, size_t i) { uint32_t v; std::memcpy(&v, p + 4 * i, 4); return static_cast<double>(v); }); return;
    case dtype::i64: f([](const uint8_t* p, size_t i) { int64_t v; std::memcpy(&v, p + 8 * i, 8); return static_cast<double>(v); }); return;
    case dtype::u64: f([](const uint8_t* p, size_t i) { uint64_t v; std::memcpy(&v, p + 8 * i, 8); return static_cast<double>(v); }); return;
  }
}

// Elements per thread below which a scan stays on the caller's thread.
constexpr size_t k_scan_chunk = size_t{1} << 20;

// body(begin, end, part) over [0, n) in up to min(cores, 8) contiguous chunks, one thread each
// (the supervisor's own CPU: a 16M-element output is compared in a few ms, issue 36).
template <class Part, class Body>
std::vector<Part> scan_chunks(size_t n, Body body) {
  const size_t hw = std::max<size_t>(1, std::thread::hardware_concurrency());
  const size_t parts = std::clamp<size_t>((n + k_scan_chunk - 1) / k_scan_chunk, 1, std::min<size_t>(hw, 8));
  std::vector<Part> out(parts);
  const size_t per = (n + parts - 1) / parts;
  std::vector<std::thread> pool;
  for (size_t t = 1; t < parts; ++t) pool.emplace_back([&, t] { body(std::min(n, t * per), std::min(n, (t + 1) * per), out[t]); });
  body(0, std::min(n, per), out[0]);
  for (auto& th : pool) th.join();
  return out;
}

struct diff_part {
  size_t mismatches = 0, nan_mismatch = 0, finite = 0, rel_n = 0;
  double max_abs = 0, sum_abs = 0, max_rel = 0, sum_rel = 0;
  int64_t first_bad = -1;
  double first_ref = 0, first_got = 0;
};

template <class D>
void diff_range(D decode, const uint8_t* rp, const uint8_t* cp, size_t begin, size_t end, const tolerance& tol, diff_part& d) {
  for (size_t i = begin; i < end; ++i) {
    const double r = decode(rp, i), c = decode(cp, i);
    bool bad;
    if (std::isfinite(r) && std::isfinite(c)) {
      const double a = std::fabs(c - r);
      ++d.finite;
      d.sum_abs += a;
      d.max_abs = std::max(d.max_abs, a);
      if (r != 0) {
        const double rel = a / std::fabs(r);
        d.sum_rel += rel;
        ++d.rel_n;
        d.max_rel = std::max(d.max_rel, rel);
      }
      bad = a > tol.atol + tol.rtol * std::fabs(r);
      d.mismatches += bad;
    } else {
      const bool rn = std::isnan(r), cn = std::isnan(c);
      bad = (rn || cn) ? rn != cn : r != c;  // NaN pattern, or an infinity that differs
      d.nan_mismatch += bad;
    }
    if (bad && d.first_bad < 0) {
      d.first_bad = static_cast<int64_t>(i);
      d.first_ref = r;
      d.first_got = c;
    }
  }
}

}  // namespace

tensor_diff compare_tensor(const std::string& name, const tensor& ref, const tensor& got, const tolerance& tol) {
  tensor_diff d;
  d.name = name;
  d.dtype = dtype_name(got.type);
  d.shape = got.shape;
  d.numel = got.numel();
  d.atol = tol.atol;
  d.rtol = tol.rtol;
  if (ref.shape != got.shape || ref.type != got.type) return d;  // caller reports the mismatch
  if (ref.data.size() < d.numel * dtype_size(ref.type) || got.data.size() < d.numel * dtype_size(got.type)) {
    d.mismatches = d.numel;  // fewer bytes than elements: nothing can be compared, nothing passes
    d.first_bad = 0;
    return d;
  }
  std::vector<diff_part> parts;
  with_decoder(ref.type, [&](auto decode) {
    parts = scan_chunks<diff_part>(d.numel, [&](size_t b, size_t e, diff_part& p) {
      diff_range(decode, ref.data.data(), got.data.data(), b, e, tol, p);
    });
  });
  double sum_abs = 0, sum_rel = 0;
  size_t finite = 0, rel_n = 0;
  for (const diff_part& p : parts) {  // in order: the first chunk with a failure has the first index
    d.mismatches += p.mismatches;
    d.nan_mismatch += p.nan_mismatch;
    d.max_abs = std::max(d.max_abs, p.max_abs);
    d.max_rel = std::max(d.max_rel, p.max_rel);
    sum_abs += p.sum_abs;
    sum_rel += p.sum_rel;
    finite += p.finite;
    rel_n += p.rel_n;
    if (d.first_bad < 0 && p.first_bad >= 0) {
      d.first_bad = p.first_bad;
      d.first_ref = p.first_ref;
      d.first_got = p.first_got;
    }
  }
  d.mean_abs = finite ? sum_abs / static_cast<double>(finite) : 0;
  d.mean_rel = rel_n ? sum_rel / static_cast<double>(rel_n) : 0;
  return d;
}

bool all_zero(const tensor& t) {
  const size_t n = t.numel();
  bool zero = n > 0;
  with_decoder(t.type, [&](auto decode) {
    for (size_t i = 0; zero && i < n; ++i) zero = decode(t.data.data(), i) == 0.0;
  });
  return zero;
}

bool all_constant(const tensor& t, double* value) {
  const size_t n = t.numel();
  if (n < 2) return false;
  bool same = true;
  double v0 = 0;
  with_decoder(t.type, [&](auto decode) {
    v0 = decode(t.data.data(), 0);
    for (size_t i = 1; same && i < n; ++i) {
      const double v = decode(t.data.data(), i);
      same = v == v0 || (std::isnan(v) && std::isnan(v0));
    }
  });
  if (same && value) *value = v0;
  return same;
}

bool same_values(const tensor& a, const tensor& b) {
  if (a.numel() != b.numel() || a.numel() == 0) return false;
  if (a.type == b.type) {
    bool same = true;
    with_decoder(a.type, [&](auto decode) {
      for (size_t i = 0; same && i < a.numel(); ++i) {
        const double x = decode(a.data.data(), i), y = decode(b.data.data(), i);
        same = x == y || (std::isnan(x) && std::isnan(y));
      }
    });
    return same;
  }
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
