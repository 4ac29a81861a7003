// magpie::bench internals: dtypes, the deterministic input generator, fp16/bf16 conversion,
// .npy / JSON writers and environment parsing. Included by <magpie/bench.hpp>; not a public
// API of its own (names under magpie::bench::detail may change).
//
// Header-only, C++17, no dependency beyond the C++ standard library and POSIX.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <unistd.h>

namespace magpie {
namespace bench {

/// A failure inside a trial (bad shape, CUDA error, I/O error...). The harness catches every
/// std::exception thrown while a trial is set up or launched and reports its message as the
/// trial's "error"; user code may throw it too.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Element types of inputs and outputs; names are the protocol's dtype names.
enum class dtype { float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, uint16,
                   uint32, uint64, boolean };

/// Tag types for 16-bit floats when no CUDA/HIP half type is at hand: `t.input<f16>(...)`
/// returns `uint16_t*` holding IEEE binary16 bits, `t.input<bf16>(...)` bfloat16 bits.
struct f16 {};
struct bf16 {};

/// How an input is filled. Values are computed in double, then converted to the dtype
/// (floats: to float32 with round-to-nearest-even, then to float16/bfloat16 RNE; integers:
/// truncated toward zero and clamped to the type's range; bool: value != 0).
struct distribution {
  enum class kind { automatic, uniform, normal, integers, constant };
  kind k = kind::automatic;
  double a = 0;  ///< uniform: lo; normal: mean; integers: lo; constant: value
  double b = 0;  ///< uniform: hi; normal: standard deviation; integers: hi (inclusive)
};
/// Uniform on [lo, hi). The default for floating dtypes is uniform(-1, 1).
inline distribution uniform(double lo = -1.0, double hi = 1.0) {
  return {distribution::kind::uniform, lo, hi};
}
/// Normal(mean, stddev) by Box-Muller.
inline distribution normal(double mean = 0.0, double stddev = 1.0) {
  return {distribution::kind::normal, mean, stddev};
}
/// Integers uniform on [lo, hi], both inclusive. Defaults for integer dtypes: signed
/// integers(-100, 100), unsigned integers(0, 100), bool integers(0, 1).
inline distribution integers(int64_t lo, int64_t hi) {
  return {distribution::kind::integers, static_cast<double>(lo), static_cast<double>(hi)};
}
/// Every element equal to v.
inline distribution constant(double v) { return {distribution::kind::constant, v, 0}; }

namespace detail {

inline const char* dtype_name(dtype t) {
  switch (t) {
    case dtype::float16: return "float16";
    case dtype::bfloat16: return "bfloat16";
    case dtype::float32: return "float32";
    case dtype::float64: return "float64";
    case dtype::int8: return "int8";
    case dtype::int16: return "int16";
    case dtype::int32: return "int32";
    case dtype::int64: return "int64";
    case dtype::uint8: return "uint8";
    case dtype::uint16: return "uint16";
    case dtype::uint32: return "uint32";
    case dtype::uint64: return "uint64";
    case dtype::boolean: return "bool";
  }
  return "?";
}

/// NumPy descr of the on-disk element (bfloat16 is stored as '<u2').
inline const char* npy_descr(dtype t) {
  switch (t) {
    case dtype::float16: return "<f2";
    case dtype::bfloat16: return "<u2";
    case dtype::float32: return "<f4";
    case dtype::float64: return "<f8";
    case dtype::int8: return "|i1";
    case dtype::int16: return "<i2";
    case dtype::int32: return "<i4";
    case dtype::int64: return "<i8";
    case dtype::uint8: return "|u1";
    case dtype::uint16: return "<u2";
    case dtype::uint32: return "<u4";
    case dtype::uint64: return "<u8";
    case dtype::boolean: return "|b1";
  }
  return "?";
}

inline bool dtype_is_float(dtype t) {
  return t == dtype::float16 || t == dtype::bfloat16 || t == dtype::float32 || t == dtype::float64;
}
inline bool dtype_is_signed(dtype t) {
  return t == dtype::int8 || t == dtype::int16 || t == dtype::int32 || t == dtype::int64;
}

/// float32 -> IEEE binary16 bits, round to nearest even (integer arithmetic only, so the
/// result does not depend on FTZ/DAZ or -ffast-math).
inline uint16_t float_to_half_bits(float value) {
  uint32_t f;
  std::memcpy(&f, &value, 4);
  const uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  const uint32_t mag = f & 0x7FFFFFFFu;
  if (mag > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u);  // NaN
  if (mag >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // >= 65520: inf
  const uint32_t exp = mag >> 23;
  if (exp < 113) {  // |x| < 2^-14: half subnormal or zero
    const uint32_t shift = 126 - exp;
    if (shift > 24) return sign;
    const uint32_t m = (mag & 0x7FFFFFu) | (exp ? 0x800000u : 0u);
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t x = mag - (112u << 23);  // rebias exponent 127 -> 15
  x += 0xFFFu + ((x >> 13) & 1u);   // round to nearest even on the 13 dropped bits
  return static_cast<uint16_t>(sign | (x >> 13));
}

/// float32 -> bfloat16 bits, round to nearest even; NaN stays a quiet NaN.
inline uint16_t float_to_bf16_bits(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

// ---- deterministic generator ------------------------------------------------------------
// Counter-based splitmix64 (documented in docs/bench-harness.md so other harnesses can match):
//   key   = fnv1a64(input name)
//   base  = mix(seed + 0x9E3779B97F4A7C15) ^ key
//   d(k)  = mix(base + (k + 1) * 0x9E3779B97F4A7C15)        (uint64 wrap-around)
//   u(k)  = (d(k) >> 11) * 2^-53                             in [0, 1)
// element i: uniform lo + (hi - lo) * u(i); integers lo + floor(u(i) * (hi - lo + 1));
// normal mean + sd * sqrt(-2 ln(1 - u(2i))) * cos(2 pi u(2i + 1)); constant v.
constexpr uint64_t k_golden = 0x9E3779B97F4A7C15ULL;

inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
inline uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001B3ULL;
  }
  return h;
}

class generator {
 public:
  generator(uint64_t seed, const std::string& name) : m_base(mix64(seed + k_golden) ^ fnv1a64(name)) {}
  double unit(uint64_t k) const {
    return static_cast<double>(mix64(m_base + (k + 1) * k_golden) >> 11) * 0x1.0p-53;
  }
  /// Value of element i under distribution d (d must not be `automatic`).
  double value(const distribution& d, uint64_t i) const {
    switch (d.k) {
      case distribution::kind::uniform: return d.a + (d.b - d.a) * unit(i);
      case distribution::kind::integers: {
        double v = d.a + std::floor(unit(i) * (d.b - d.a + 1.0));
        return v > d.b ? d.b : v;
      }
      case distribution::kind::normal: {
        const double u1 = 1.0 - unit(2 * i), u2 = unit(2 * i + 1);
        return d.a + d.b * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
      }
      case distribution::kind::constant: return d.a;
      case distribution::kind::automatic: break;
    }
    return 0.0;
  }

 private:
  uint64_t m_base;
};

/// Writes elements [0, n) of distribution d (the values gen.value(d, i), in the same double
/// arithmetic) to `out` as S, converted by `conv`. One pass, the distribution's switch outside the
/// loop: ~2 ns per element for uniform float32 (issue 36; was ~6-9 ns with a switch per element
/// and a fresh host buffer per call). Deliberately one thread: the supervisor charges CPU time
/// that other threads of the harness spend during `inputs` to the next fresh sample
/// (docs/harness-protocol.md, input_reuse), so generating on helper threads would make every
/// honest harness pay a noisy charge.
template <class S, class Conv>
inline void fill_elements(const generator& gen, const distribution& d, size_t n, unsigned char* out, Conv conv) {
  auto put = [out, &conv](size_t i, double v) {
    const S s = conv(v);
    std::memcpy(out + i * sizeof(S), &s, sizeof(S));
  };
  if (d.k == distribution::kind::uniform) {
    const double lo = d.a, width = d.b - d.a;
    for (size_t i = 0; i < n; ++i) put(i, lo + width * gen.unit(i));
  } else if (d.k == distribution::kind::constant) {
    for (size_t i = 0; i < n; ++i) put(i, d.a);
  } else {
    for (size_t i = 0; i < n; ++i) put(i, gen.value(d, i));
  }
}

template <class I>
inline I clamp_int(double v) {
  if (std::isnan(v)) return 0;
  v = std::trunc(v);
  const double lo = static_cast<double>(std::numeric_limits<I>::min());
  const double hi = static_cast<double>(std::numeric_limits<I>::max());
  if (v <= lo) return std::numeric_limits<I>::min();
  if (v >= hi) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

inline std::string describe(const distribution& d) {
  char buf[96];
  switch (d.k) {
    case distribution::kind::uniform: std::snprintf(buf, sizeof buf, "uniform(%g,%g)", d.a, d.b); break;
    case distribution::kind::normal: std::snprintf(buf, sizeof buf, "normal(%g,%g)", d.a, d.b); break;
    case distribution::kind::integers: std::snprintf(buf, sizeof buf, "integers(%.0f,%.0f)", d.a, d.b); break;
    case distribution::kind::constant: std::snprintf(buf, sizeof buf, "constant(%g)", d.a); break;
    default: std::snprintf(buf, sizeof buf, "automatic");
  }
  return buf;
}

/// The default distribution of a dtype (see uniform() / integers()).
inline distribution resolve(distribution d, dtype t) {
  if (d.k != distribution::kind::automatic) return d;
  if (dtype_is_float(t)) return uniform(-1.0, 1.0);
  if (t == dtype::boolean) return integers(0, 1);
  return dtype_is_signed(t) ? integers(-100, 100) : integers(0, 100);
}

// ---- JSON / files -----------------------------------------------------------------------
inline std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

inline std::string json_shape(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

inline std::string errno_text(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

/// Writes `bytes` to `path` through `path.tmp` + rename, so readers never see a partial file.
inline void write_file_atomic(const std::string& path, const void* data, size_t bytes) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw error(errno_text("cannot create", tmp));
  const bool ok = std::fwrite(data, 1, bytes, f) == bytes;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    throw error(errno_text("cannot write", tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw error(errno_text("cannot rename to", path));
}

/// .npy format 1.0, C order, little-endian host data (x86-64 / aarch64).
inline void write_npy(const std::string& path, dtype t, const std::vector<int64_t>& shape,
                      const void* data, size_t bytes) {
  std::string dict = std::string("{'descr': '") + npy_descr(t) + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) dict += std::to_string(shape[i]) + ",";
  if (shape.size() > 1) dict.pop_back();
  dict += "), }";
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string file = "\x93NUMPY";
  file += static_cast<char>(1);
  file += static_cast<char>(0);
  file += static_cast<char>(dict.size() & 0xFF);
  file += static_cast<char>((dict.size() >> 8) & 0xFF);
  file += dict;
  file.append(static_cast<const char*>(data), bytes);
  write_file_atomic(path, file.data(), file.size());
}

/// File-name-safe form of a tensor name ([A-Za-z0-9_.-], others become '_').
inline std::string file_safe(const std::string& name) {
  std::string s = name;
  for (char& c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) c = '_';
  }
  return s;
}

// ---- environment ------------------------------------------------------------------------
inline const char* env_str(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}
/// Unsigned integer environment variable; `fallback` when unset; throws on garbage.
inline uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = env_str(name);
  if (!v) return fallback;
  char* end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || v[0] == '-')
    throw error(std::string("environment variable ") + name + "='" + v + "' is not an unsigned integer");
  return x;
}
inline std::vector<uint64_t> env_seeds(const char* name) {
  std::vector<uint64_t> seeds;
  const char* v = env_str(name);
  if (!v) return seeds;
  std::string s = v;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    std::string item = s.substr(pos, comma - pos);
    char* end = nullptr;
    errno = 0;
    unsigned long long x = std::strtoull(item.c_str(), &end, 10);
    if (item.empty() || errno != 0 || *end != '\0' || item[0] == '-')
      throw error(std::string(name) + ": '" + item + "' is not an unsigned 64-bit seed");
    seeds.push_back(x);
    pos = comma + 1;
  }
  return seeds;
}

}  // namespace detail
}  // namespace bench
}  // namespace magpie
