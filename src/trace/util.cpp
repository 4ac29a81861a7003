#include "trace/util.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "trace/json_scan.h"

namespace magpie::trace {

size_t interner::hash::operator()(std::string_view s) const {
  // Four independent lanes of 8 bytes (a 32-byte step costs about one lane's latency), folded
  // at the end; every byte counts, so names that differ anywhere spread.
  constexpr uint64_t k_mul = 0x9E3779B97F4A7C15ull;
  const char* p = s.data();
  size_t n = s.size();
  auto word = [](const char* b) {
    uint64_t w;
    std::memcpy(&w, b, 8);
    return w;
  };
  auto mix = [](uint64_t h, uint64_t w) {
    h = (h ^ w) * k_mul;
    return h ^ (h >> 29);
  };
  uint64_t a = n * k_mul, b = a ^ 0x243F6A8885A308D3ull, c = a ^ 0x13198A2E03707344ull, d = a ^ 0xA4093822299F31D0ull;
  for (; n >= 32; p += 32, n -= 32) {
    a = mix(a, word(p));
    b = mix(b, word(p + 8));
    c = mix(c, word(p + 16));
    d = mix(d, word(p + 24));
  }
  for (; n >= 8; p += 8, n -= 8) a = mix(a, word(p));
  if (n) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    a = mix(a, w);
  }
  uint64_t h = mix(mix(mix(a, b), c), d);
  h ^= h >> 32;
  return static_cast<size_t>(h * k_mul);
}

uint32_t interner::intern(std::string_view s) {
  auto it = m_ids.find(s);
  if (it != m_ids.end()) return it->second;
  m_strings.emplace_back(s);
  uint32_t id = static_cast<uint32_t>(m_strings.size() - 1);
  m_ids.emplace(std::string_view(m_strings.back()), id);
  return id;
}

std::optional<uint32_t> interner::find(std::string_view s) const {
  auto it = m_ids.find(s);
  if (it == m_ids.end()) return std::nullopt;
  return it->second;
}

std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  // Shortest round-trip digits in scientific form: [-]d[.ddd]e[+-]XX
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string_view s(buf, static_cast<size_t>(res.ptr - buf));
  bool neg = s[0] == '-';
  if (neg) s.remove_prefix(1);
  size_t epos = s.find('e');
  std::string digits;
  for (char c : s.substr(0, epos))
    if (c != '.') digits.push_back(c);
  int exp10 = std::atoi(std::string(s.substr(epos + 1)).c_str());
  std::string out = neg ? "-" : "";
  if (exp10 >= -4 && exp10 < 16) {  // repr's fixed-notation range
    if (exp10 >= 0) {
      size_t int_len = static_cast<size_t>(exp10) + 1;
      if (digits.size() <= int_len) {
        out += digits + std::string(int_len - digits.size(), '0') + ".0";
      } else {
        out += digits.substr(0, int_len) + "." + digits.substr(int_len);
      }
    } else {
      out += "0." + std::string(static_cast<size_t>(-exp10 - 1), '0') + digits;
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char e[16];
  std::snprintf(e, sizeof(e), "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
  return out + e;
}

std::string py_fixed(double v, int decimals) {
  char buf[512];
  int n = std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  if (n < 0) return "nan";
  if (static_cast<size_t>(n) < sizeof(buf)) return std::string(buf, static_cast<size_t>(n));
  std::string big(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(big.data(), big.size(), "%.*f", decimals, v);
  big.resize(static_cast<size_t>(n));
  return big;
}

namespace {

std::string python_str_repr(std::string_view s) {
  bool has_sq = s.find('\'') != std::string_view::npos;
  bool has_dq = s.find('"') != std::string_view::npos;
  char q = (has_sq && !has_dq) ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == static_cast<unsigned char>(q)) out += std::string("\\") + q;
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof(b), "\\x%02x", c);
      out += b;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back(q);
  return out;
}

bool is_integer_text(std::string_view t) { return t.find_first_of(".eE") == std::string_view::npos; }

}  // namespace

std::string python_repr_json(std::string_view raw) {
  std::string out;
  detail::scan_ctx ctx;
  ctx.end = raw.data() + raw.size();
  ctx.final = true;
  const char* p = raw.data();
  while (p < ctx.end) {
    char c = *p;
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      ++p;
    } else if (c == '[' || c == ']' || c == '{' || c == '}') {
      out.push_back(c);
      ++p;
    } else if (c == ',') {
      out += ", ";
      ++p;
    } else if (c == ':') {
      out += ": ";
      ++p;
    } else if (c == '"') {
      std::string_view v;
      std::string scratch;
      if (detail::read_string(p, ctx, &v, &scratch) != detail::scan::ok) break;
      out += python_str_repr(v);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      std::string_view t;
      if (detail::skip_number(p, ctx, &t) != detail::scan::ok) break;
      if (is_integer_text(t)) {
        out += (t == "-0") ? std::string("0") : std::string(t);
      } else {
        out += python_float_repr(detail::number_to_double(t));
      }
    } else if (c == 't') {
      out += "True";
      p += 4;
    } else if (c == 'f') {
      out += "False";
      p += 5;
    } else if (c == 'n') {
      out += "None";
      p += 4;
    } else {
      break;  // not reachable for validated input
    }
  }
  return out;
}

std::vector<std::string_view> json_array_elements(std::string_view raw) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < raw.size() && (raw[i] == ' ' || raw[i] == '\n' || raw[i] == '\r' || raw[i] == '\t')) ++i;
  if (i >= raw.size() || raw[i] != '[') return out;
  detail::scan_ctx ctx;
  ctx.end = raw.data() + raw.size();
  ctx.final = true;
  const char* p = raw.data() + i + 1;
  for (;;) {
    while (p < ctx.end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
    if (p >= ctx.end || *p == ']') break;
    std::string_view v;
    if (detail::skip_value(p, ctx, &v) != detail::scan::ok) break;
    out.push_back(v);
    while (p < ctx.end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
    if (p < ctx.end && *p == ',') ++p;
    else break;
  }
  return out;
}

std::optional<std::string> json_string_value(std::string_view raw) {
  if (raw.empty() || raw[0] != '"') return std::nullopt;
  detail::scan_ctx ctx;
  ctx.end = raw.data() + raw.size();
  ctx.final = true;
  const char* p = raw.data();
  std::string_view v;
  std::string scratch;
  if (detail::read_string(p, ctx, &v, &scratch) != detail::scan::ok) return std::nullopt;
  return std::string(v);
}

std::optional<std::vector<int64_t>> json_int_list(std::string_view raw) {
  std::string_view t = raw;
  while (!t.empty() && (t.front() == ' ' || t.front() == '\n')) t.remove_prefix(1);
  if (t.empty() || t[0] != '[') return std::nullopt;
  std::vector<int64_t> out;
  for (std::string_view e : json_array_elements(t)) {
    int64_t v = 0;
    if (e.empty() || !(e[0] == '-' || (e[0] >= '0' && e[0] <= '9')) || !detail::number_to_int(e, &v))
      return std::nullopt;
    out.push_back(v);
  }
  return out;
}

std::string format_gap_shape(std::string_view input_dims_raw) {
  std::string out;
  for (std::string_view dim : json_array_elements(input_dims_raw)) {
    if (dim.empty() || dim[0] != '[') continue;
    std::vector<std::string_view> items = json_array_elements(dim);
    if (items.empty()) continue;
    if (!out.empty()) out.push_back('x');
    out.push_back('[');
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out.push_back(',');
      out += python_repr_json(items[i]);
    }
    out.push_back(']');
  }
  return out;
}

std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string utf8_prefix(std::string_view s, size_t n) {
  size_t count = 0, i = 0;
  for (; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80) {
      if (count == n) break;
      ++count;
    }
  }
  return std::string(s.substr(0, i));
}

std::string py_pad_right(std::string_view s, size_t width) {
  size_t len = utf8_length(s);
  std::string out(s);
  if (len < width) out.append(width - len, ' ');
  return out;
}

std::string py_pad_left(std::string_view s, size_t width) {
  size_t len = utf8_length(s);
  std::string out;
  if (len < width) out.append(width - len, ' ');
  out += s;
  return out;
}

}  // namespace magpie::trace
