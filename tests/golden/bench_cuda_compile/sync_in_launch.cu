// A candidate that synchronises inside its launch (cudaDeviceSynchronize after the kernel).
// In timing mode this deadlocks against the blocking kernel until its timeout: the harness
// must report "blocking_kernel timeout" on the first sample, disable the blocking kernel and
// keep answering (checked on the GPU by tests/gpu/cuda_harness.sh).
#include <magpie/bench.hpp>

__global__ void fill_one(float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = 1.0f;
}

int main(int argc, char** argv) {
  magpie::bench::harness h("sync_in_launch");
  h.sizes({{"n=1M", {1 << 20}}});
  return h.run(argc, argv, [](magpie::bench::trial& t) {
    const int64_t n = t.dim(0);
    float* c = t.output<float>("c", {n});
    return [=] {
      fill_one<<<static_cast<unsigned>((n + 255) / 256), 256, 0, magpie::bench::stream()>>>(c, n);
      cudaDeviceSynchronize();  // the anti-pattern under test
    };
  });
}
