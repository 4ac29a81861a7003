#include "core/utf8.h"

namespace magpie {

std::string utf8_prefix(std::string_view s, size_t n) {
  if (n >= s.size()) return std::string(s);
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return std::string(s.substr(0, n));
}

}  // namespace magpie
