// SHA-256 (FIPS 180-4) for provenance: hashes of input configs and artifacts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace magpie::serve {

/// Lower-case hex digest of `data`.
std::string sha256_hex(std::string_view data);

/// Incremental SHA-256 (for files written or read in pieces).
class sha256_stream {
 public:
  void update(std::string_view data);
  /// Lower-case hex digest of everything given so far (the stream can still be updated).
  std::string hex() const;

 private:
  uint32_t m_h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  unsigned char m_buf[64] = {0};
  size_t m_len = 0;
  uint64_t m_total = 0;
};

}  // namespace magpie::serve
