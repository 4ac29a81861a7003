#include "core/utf8.h"

#include <cstdio>

namespace magpie {

namespace {

/// Length of the valid UTF-8 sequence at s[i], or 0 with *bad = length of the maximal
/// invalid subpart (>= 1) to replace.
size_t utf8_seq(std::string_view s, size_t i, size_t* bad) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c == 0xE0) len = 3, lo = 0xA0;
  else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) len = 3;
  else if (c == 0xED) len = 3, hi = 0x9F;
  else if (c == 0xF0) len = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) len = 4;
  else if (c == 0xF4) len = 4, hi = 0x8F;
  size_t k = 1;
  for (; k < len && i + k < s.size(); ++k) {
    auto d = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (d < lo || d > hi) : (d < 0x80 || d > 0xBF)) break;
  }
  if (len && k == len) return len;
  *bad = k;
  return 0;
}

}  // namespace

std::string utf8_sanitize(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && static_cast<unsigned char>(s[i]) < 0x80) ++i;
  std::string out;
  size_t flushed = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t bad = 0, n = utf8_seq(s, i, &bad);
    if (n) {
      i += n;
      continue;
    }
    out.append(s.substr(flushed, i - flushed));
    out += "\xEF\xBF\xBD";  // U+FFFD
    i += bad;
    flushed = i;
  }
  if (flushed == 0) return std::string(s);
  out.append(s.substr(flushed));
  return out;
}

std::string utf8_prefix(std::string_view s, size_t n) {
  if (n >= s.size()) return std::string(s);
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return std::string(s.substr(0, n));
}

std::string printable_text(std::string_view s) {
  std::string valid = utf8_sanitize(s), out;
  out.reserve(valid.size());
  for (char c : valid) {
    auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace magpie
