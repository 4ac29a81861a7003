#include "core/utf8.h"

#include <cstdio>

#include "core/csv.h"

namespace magpie {

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
