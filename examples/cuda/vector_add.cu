// Reference CUDA vector add: c[i] = a[i] + b[i], one thread per element, 256-thread blocks.
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -I<magpie>/include vector_add.cu -o vector_add
#include <magpie/bench.hpp>

__global__ void vector_add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main(int argc, char** argv) {
  magpie::bench::harness h("vector_add");
  // 16M floats: 3 x 64 MiB of traffic, ~40 us on an H200 (the timed size).
  h.sizes({{"n=1000", {1000}}, {"n=4099", {4099}}, {"n=1M+3", {(1 << 20) + 3}}, {"n=16M", {1 << 24}}});
  return h.run(argc, argv, [](magpie::bench::trial& t) {
    const int64_t n = t.dim(0);
    const float* a = t.input<float>("a", {n});
    const float* b = t.input<float>("b", {n});
    float* c = t.output<float>("c", {n});
    const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
    return [=] { vector_add<<<blocks, 256, 0, magpie::bench::stream()>>>(a, b, c, n); };
  });
}
