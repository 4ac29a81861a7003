// NumPy .npy files (format 1.0-3.0, little-endian, C order): the tensor exchange format
// between kernel harnesses and the supervisor.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/status.h"

namespace magpie {

enum class dtype { f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, boolean };

/// Canonical names: float16, bfloat16, float32, float64, int8..., uint8..., bool.
const char* dtype_name(dtype t);
/// Accepts canonical names and common aliases (fp32, half, bf16, f4, torch.float32...).
bool parse_dtype(const std::string& s, dtype* out);
size_t dtype_size(dtype t);
bool dtype_is_float(dtype t);

struct tensor {
  dtype type = dtype::f32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  ///< raw little-endian elements, C order
  size_t numel() const;
  /// Element i converted to double (bf16/f16 decoded exactly).
  double at(size_t i) const;
};

/// Reads a .npy file. The descr must be little-endian or byte-order-free. bfloat16 has no
/// NumPy descr: harnesses store it as '<u2' and `dtype_override` (from the manifest) says so.
status_or<tensor> read_npy(const fs::path& path, const dtype* dtype_override = nullptr);
/// Writes format 1.0 (bfloat16 is written as '<u2').
status write_npy(const fs::path& path, const tensor& t);
std::string shape_to_string(const std::vector<int64_t>& shape);

double half_to_double(uint16_t h);
double bfloat16_to_double(uint16_t b);

}  // namespace magpie
