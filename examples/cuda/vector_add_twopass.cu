// Correct but deliberately slower CUDA vector add: two passes over memory (c = a, then
// c += b): 5 array transfers instead of 3, about 1.6x the reference's time on a
// bandwidth-bound GPU. Used to check that `magpie compare` reports `slower`.
#include <magpie/bench.hpp>

__global__ void copy_pass(const float* a, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i];
}

__global__ void add_pass(const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] += b[i];
}

int main(int argc, char** argv) {
  magpie::bench::harness h("vector_add");
  h.sizes({{"n=1000", {1000}}, {"n=4099", {4099}}, {"n=1M+3", {(1 << 20) + 3}}, {"n=16M", {1 << 24}}});
  return h.run(argc, argv, [](magpie::bench::trial& t) {
    const int64_t n = t.dim(0);
    const float* a = t.input<float>("a", {n});
    const float* b = t.input<float>("b", {n});
    float* c = t.output<float>("c", {n});
    const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
    return [=] {
      copy_pass<<<blocks, 256, 0, magpie::bench::stream()>>>(a, c, n);
      add_pass<<<blocks, 256, 0, magpie::bench::stream()>>>(b, c, n);
    };
  });
}
