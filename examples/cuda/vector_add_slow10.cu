// vector_add plus a second kernel that moves ~10% more bytes (copies the first 1/8 of c into a
// scratch buffer): correct, and about 10-15% slower than vector_add on the timed size. Used to
// show that compare reports a small slowdown as "slower" (examples/cuda/compare_slow10.yaml).
#include <magpie/bench.hpp>

__global__ void vector_add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void copy_prefix(const float* c, float* scratch, int64_t m) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < m) scratch[i] = c[i];
}

int main(int argc, char** argv) {
  magpie::bench::harness h("vector_add_slow10");
  h.sizes({{"n=1000", {1000}}, {"n=4099", {4099}}, {"n=1M+3", {(1 << 20) + 3}}, {"n=16M", {1 << 24}}});
  return h.run(argc, argv, [](magpie::bench::trial& t) {
    const int64_t n = t.dim(0);
    const float* a = t.input<float>("a", {n});
    const float* b = t.input<float>("b", {n});
    float* c = t.output<float>("c", {n});
    const int64_t m = (n + 7) / 8;  // 1/8 of c read + written: 2*m*4 bytes ≈ 8% of 3*n*4, plus one launch
    float* scratch = nullptr;
    if (cudaMalloc(&scratch, static_cast<size_t>(m) * sizeof(float)) != cudaSuccess) scratch = nullptr;
    const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
    const unsigned blocks_m = static_cast<unsigned>((m + 255) / 256);
    return [=] {
      vector_add<<<blocks, 256, 0, magpie::bench::stream()>>>(a, b, c, n);
      if (scratch) copy_prefix<<<blocks_m, 256, 0, magpie::bench::stream()>>>(c, scratch, m);
    };
  });
}
