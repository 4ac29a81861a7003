// SHA-256 (FIPS 180-4) for provenance: hashes of input configs and artifacts.
#pragma once

#include <string>
#include <string_view>

namespace magpie::serve {

/// Lower-case hex digest of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace magpie::serve
