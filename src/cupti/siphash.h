// SipHash-2-4 (Aumasson & Bernstein), 128-bit key, 64-bit tag: the per-record MAC of the
// CUPTI record channel (docs/harness-protocol.md, "CUPTI records"). Header-only, no
// dependencies: shared by libmagpie_cupti.so (writer) and the supervisor (reader).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace magpie::cupti_mac {

inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

inline uint64_t load_le64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

/// SipHash-2-4 of `len` bytes at `data` under the 16-byte `key`.
inline uint64_t siphash24(const unsigned char key[16], const void* data, size_t len) {
  const unsigned char* in = static_cast<const unsigned char*>(data);
  const uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
  uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
  uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
  auto round = [&] {
    v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);
    v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;
    v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;
    v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);
  };
  const size_t blocks = len / 8;
  for (size_t i = 0; i < blocks; ++i) {
    const uint64_t m = load_le64(in + 8 * i);
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
  uint64_t b = static_cast<uint64_t>(len) << 56;
  const unsigned char* tail = in + 8 * blocks;
  for (size_t i = 0; i < (len & 7); ++i) b |= static_cast<uint64_t>(tail[i]) << (8 * i);
  v3 ^= b;
  round();
  round();
  v0 ^= b;
  v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) round();
  return v0 ^ v1 ^ v2 ^ v3;
}

/// Parses 32 hex digits into a 16-byte key; false on anything else.
inline bool parse_key(const char* hex, unsigned char key[16]) {
  for (int i = 0; i < 16; ++i) {
    int v = 0;
    for (int j = 0; j < 2; ++j) {
      const char c = hex[2 * i + j];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) return false;
      v = v * 16 + d;
    }
    key[i] = static_cast<unsigned char>(v);
  }
  return hex[32] == '\0' || hex[32] == ' ' || hex[32] == '\n';
}

}  // namespace magpie::cupti_mac
