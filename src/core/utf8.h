// UTF-8 aware shortening of text shown to users.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace magpie {

/// At most `n` bytes of `s`, ended before a UTF-8 continuation byte so that no multi-byte
/// character is cut (shortened console/report text stays valid UTF-8).
std::string utf8_prefix(std::string_view s, size_t n);

}  // namespace magpie
