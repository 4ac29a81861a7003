#include "core/npy.h"

#include <cmath>
#include <cstring>

#include "core/strings.h"

namespace magpie {

namespace {
struct dtype_info {
  dtype t;
  const char* name;
  const char* descr;  // without byte order
  size_t size;
};
const dtype_info k_types[] = {
    {dtype::f16, "float16", "f2", 2},  {dtype::bf16, "bfloat16", "u2", 2}, {dtype::f32, "float32", "f4", 4},
    {dtype::f64, "float64", "f8", 8},  {dtype::i8, "int8", "i1", 1},       {dtype::i16, "int16", "i2", 2},
    {dtype::i32, "int32", "i4", 4},    {dtype::i64, "int64", "i8", 8},     {dtype::u8, "uint8", "u1", 1},
    {dtype::u16, "uint16", "u2", 2},   {dtype::u32, "uint32", "u4", 4},    {dtype::u64, "uint64", "u8", 8},
    {dtype::boolean, "bool", "b1", 1},
};
const dtype_info& info(dtype t) {
  for (const auto& i : k_types)
    if (i.t == t) return i;
  return k_types[2];
}
}  // namespace

const char* dtype_name(dtype t) { return info(t).name; }
size_t dtype_size(dtype t) { return info(t).size; }
bool dtype_is_float(dtype t) { return t == dtype::f16 || t == dtype::bf16 || t == dtype::f32 || t == dtype::f64; }

bool parse_dtype(const std::string& s_in, dtype* out) {
  std::string s = to_lower(s_in);
  if (starts_with(s, "torch.")) s = s.substr(6);
  struct alias {
    const char* n;
    dtype t;
  };
  static const alias aliases[] = {
      {"float16", dtype::f16}, {"fp16", dtype::f16}, {"half", dtype::f16}, {"f16", dtype::f16},
      {"bfloat16", dtype::bf16}, {"bf16", dtype::bf16}, {"float32", dtype::f32}, {"fp32", dtype::f32},
      {"float", dtype::f32}, {"f32", dtype::f32}, {"float64", dtype::f64}, {"fp64", dtype::f64},
      {"double", dtype::f64}, {"f64", dtype::f64}, {"int8", dtype::i8}, {"int16", dtype::i16},
      {"int32", dtype::i32}, {"int", dtype::i32}, {"int64", dtype::i64}, {"long", dtype::i64},
      {"uint8", dtype::u8}, {"uint16", dtype::u16}, {"uint32", dtype::u32}, {"uint64", dtype::u64},
      {"bool", dtype::boolean},
  };
  for (const auto& a : aliases)
    if (s == a.n) {
      *out = a.t;
      return true;
    }
  return false;
}

size_t tensor::numel() const {
  size_t n = 1;
  for (auto d : shape) n *= static_cast<size_t>(d);
  return n;
}

double half_to_double(uint16_t h) {
  int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v;
  if (exp == 0) v = std::ldexp(static_cast<double>(man), -24);
  else if (exp == 31) v = man ? NAN : INFINITY;
  else v = std::ldexp(static_cast<double>(man | 0x400), exp - 25);
  return sign ? -v : v;
}

double bfloat16_to_double(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

double tensor::at(size_t i) const {
  const uint8_t* p = data.data() + i * dtype_size(type);
  switch (type) {
    case dtype::f16: { uint16_t v; std::memcpy(&v, p, 2); return half_to_double(v); }
    case dtype::bf16: { uint16_t v; std::memcpy(&v, p, 2); return bfloat16_to_double(v); }
    case dtype::f32: { float v; std::memcpy(&v, p, 4); return v; }
    case dtype::f64: { double v; std::memcpy(&v, p, 8); return v; }
    case dtype::i8: return static_cast<int8_t>(*p);
    case dtype::i16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case dtype::i32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case dtype::i64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case dtype::u8: return *p;
    case dtype::u16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case dtype::u32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case dtype::u64: { uint64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case dtype::boolean: return *p ? 1.0 : 0.0;
  }
  return 0;
}

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::vector<std::string> parts;
  for (auto d : shape) parts.push_back(std::to_string(d));
  return "[" + join(parts, ",") + "]";
}

namespace {
// Extracts the value text after 'key': in a Python dict literal header.
std::string header_field(const std::string& h, const std::string& key) {
  auto k = h.find("'" + key + "'");
  if (k == std::string::npos) return {};
  auto colon = h.find(':', k);
  if (colon == std::string::npos) return {};
  size_t i = colon + 1;
  while (i < h.size() && h[i] == ' ') ++i;
  if (i < h.size() && h[i] == '(') {
    auto close = h.find(')', i);
    return close == std::string::npos ? std::string() : h.substr(i, close - i + 1);
  }
  if (i < h.size() && (h[i] == '\'' || h[i] == '"')) {
    auto close = h.find(h[i], i + 1);
    return close == std::string::npos ? std::string() : h.substr(i + 1, close - i - 1);
  }
  size_t j = i;
  while (j < h.size() && h[j] != ',' && h[j] != '}') ++j;
  return std::string(trim(h.substr(i, j - i)));
}
}  // namespace

status_or<tensor> read_npy(const fs::path& path, const dtype* dtype_override) {
  MAGPIE_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  const char* what = path.c_str();
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    return parse_error("%s: not a .npy file", what);
  int major = static_cast<unsigned char>(bytes[6]);
  size_t hlen, hoff;
  if (major == 1) {
    hlen = static_cast<unsigned char>(bytes[8]) | (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    hoff = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return parse_error("%s: truncated header", what);
    hlen = 0;
    for (int i = 0; i < 4; ++i) hlen |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    hoff = 12;
  } else {
    return parse_error("%s: unsupported .npy version %d", what, major);
  }
  if (hoff + hlen > bytes.size()) return parse_error("%s: truncated header", what);
  std::string header = bytes.substr(hoff, hlen);
  std::string descr = header_field(header, "descr");
  std::string order = header_field(header, "fortran_order");
  std::string shape_s = header_field(header, "shape");
  if (descr.size() < 2) return parse_error("%s: missing descr", what);
  if (order == "True") return parse_error("%s: Fortran-order arrays are not supported", what);
  char bo = descr[0];
  std::string code = descr.substr(1);
  if (bo == '>') return parse_error("%s: big-endian data is not supported", what);
  if (bo != '<' && bo != '|' && bo != '=') code = descr;
  tensor t;
  bool found = false;
  for (const auto& i : k_types) {
    if (i.t != dtype::bf16 && code == i.descr) {
      t.type = i.t;
      found = true;
      break;
    }
  }
  if (code == "?") {
    t.type = dtype::boolean;
    found = true;
  }
  if (!found) return parse_error("%s: unsupported dtype '%s'", what, descr.c_str());
  if (dtype_override) {
    if (dtype_size(*dtype_override) != dtype_size(t.type))
      return parse_error("%s: stored as %s, which cannot hold %s", what, dtype_name(t.type), dtype_name(*dtype_override));
    t.type = *dtype_override;
  }
  std::string inner = shape_s.size() >= 2 ? shape_s.substr(1, shape_s.size() - 2) : "";
  for (const auto& part : split(inner, ',')) {
    auto p = trim(part);
    if (p.empty()) continue;
    auto v = parse_int(p);
    if (!v || *v < 0) return parse_error("%s: bad shape %s", what, shape_s.c_str());
    t.shape.push_back(*v);
  }
  size_t need = t.numel() * dtype_size(t.type);
  size_t doff = hoff + hlen;
  if (bytes.size() - doff < need)
    return parse_error("%s: data truncated (%zu of %zu bytes)", what, bytes.size() - doff, need);
  t.data.assign(bytes.begin() + static_cast<long>(doff), bytes.begin() + static_cast<long>(doff + need));
  return t;
}

status write_npy(const fs::path& path, const tensor& t) {
  const char* descr = t.type == dtype::boolean ? "|b1" : nullptr;
  std::string d = descr ? descr : (dtype_size(t.type) == 1 ? "|" : "<") + std::string(info(t.type).descr);
  std::string shape;
  for (size_t i = 0; i < t.shape.size(); ++i) shape += std::to_string(t.shape[i]) + (t.shape.size() == 1 ? "," : (i + 1 < t.shape.size() ? ", " : ""));
  std::string header = "{'descr': '" + d + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  size_t total = 10 + header.size() + 1;
  size_t pad = (64 - total % 64) % 64;
  header += std::string(pad, ' ') + "\n";
  std::string out = "\x93NUMPY";
  out += static_cast<char>(1);
  out += static_cast<char>(0);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size());
  return write_file_atomic(path, out);
}

}  // namespace magpie
