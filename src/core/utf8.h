// UTF-8 aware shortening of text shown to users.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace magpie {

/// At most `n` bytes of `s`, ended before a UTF-8 continuation byte so that no multi-byte
/// character is cut (shortened console/report text stays valid UTF-8).
std::string utf8_prefix(std::string_view s, size_t n);

/// Valid UTF-8: each maximal invalid subsequence becomes U+FFFD, as Python's
/// bytes.decode("utf-8", "replace") does; valid text is returned unchanged.
std::string utf8_sanitize(std::string_view text);

/// Text from a child process made safe to print and store: valid UTF-8 (invalid bytes become
/// U+FFFD, as utf8_sanitize) and every control character other than newline and
/// tab written as "\xHH" (a candidate's output cannot move the cursor or recolour a terminal).
std::string printable_text(std::string_view s);

}  // namespace magpie
