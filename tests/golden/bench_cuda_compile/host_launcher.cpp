// The CUDA backend from a host compiler (g++ -DMAGPIE_BENCH_CUDA, linked with cudart): a
// harness whose kernel lives in another translation unit. No blocking kernel in this mode.
#include <magpie/bench.hpp>

void launch_copy(const float* in, float* out, int64_t n, cudaStream_t s);  // defined in a .cu

int main(int argc, char** argv) {
  magpie::bench::harness h("host_launcher");
  h.sizes({{"n=1000", {1000}}});
  return h.run(argc, argv, [](magpie::bench::trial& t) {
    const int64_t n = t.dim(0);
    const float* in = t.input<float>("in", {n});
    float* out = t.output<float>("out", {n});
    return [=] { launch_copy(in, out, n, magpie::bench::stream()); };
  });
}
