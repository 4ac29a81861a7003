// Compile check of the CUDA backend with every 16-bit type spelling: __half, __nv_bfloat16
// and the f16/bf16 tags (uint16_t storage), plus scratch buffers and a multi-kernel launch.
#include <magpie/bench.hpp>

namespace mb = magpie::bench;

__global__ void scale_half(const __half* x, __half* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __hmul(x[i], __float2half(2.0f));
}
__global__ void bf16_to_float(const __nv_bfloat16* x, const uint16_t* bits, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __bfloat162float(x[i]) + static_cast<float>(bits[i] & 1u);
}

int main(int argc, char** argv) {
  mb::harness h("cuda_types");
  h.sizes({{"n=4099", {4099}}, {"n=1M", {1 << 20}}});
  return h.run(argc, argv, [](mb::trial& t) {
    const int64_t n = t.dim(0);
    const __half* x = t.input<__half>("x", {n}, mb::normal(0, 1));
    const __nv_bfloat16* b = t.input<__nv_bfloat16>("b", {n});
    const uint16_t* bits = t.input<mb::bf16>("bits", {n}, mb::integers(0, 3));
    const uint16_t* hbits = t.input<mb::f16>("hbits", {n});
    __half* y = t.output<__half>("y", {n});
    float* z = t.output<float>("z", {n});
    float* work = t.scratch<float>("work", {n});
    (void)hbits;
    (void)work;
    const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
    return [=] {
      scale_half<<<blocks, 256, 0, mb::stream()>>>(x, y, n);
      bf16_to_float<<<blocks, 256, 0, mb::stream()>>>(b, bits, z, n);
    };
  });
}
