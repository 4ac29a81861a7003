// Dumps float32 -> float16 / bfloat16 conversions of bench.hpp for driver.py to check:
// records of (uint32 float bits, uint16 half bits, uint16 bf16 bits), little-endian. Covers
// every half subnormal/normal boundary region plus random bit patterns.
#include <magpie/bench.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  FILE* f = std::fopen(argv[1], "wb");
  if (!f) return 1;
  uint64_t s = 12345;
  for (uint32_t i = 0; i < 400000; ++i) {
    uint32_t x;
    if (i < 131072) {
      x = ((i & 0xFFFFu) << 13) + 0x33000000u * ((i >> 16) & 1u);  // half-grid values and ties
      x += (i & 7u) == 3 ? 0x1000u : 0u;                          // exact ties at the rounding bit
    } else {
      s = magpie::bench::detail::mix64(s + i);
      x = static_cast<uint32_t>(s);
    }
    float v;
    std::memcpy(&v, &x, 4);
    const uint16_t h = magpie::bench::detail::float_to_half_bits(v);
    const uint16_t b = magpie::bench::detail::float_to_bf16_bits(v);
    std::fwrite(&x, 4, 1, f);
    std::fwrite(&h, 2, 1, f);
    std::fwrite(&b, 2, 1, f);
  }
  return std::fclose(f) == 0 ? 0 : 1;
}
