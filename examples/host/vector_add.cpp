// Reference host vector add: c[i] = a[i] + b[i] (float32). magpie compiles it with
//   g++ -O2 -std=c++17 -I<magpie>/include vector_add.cpp -o vector_add
// Run it by hand (no MAGPIE_BENCH_MODE) to see one line per size.
#include <magpie/bench.hpp>

static void vector_add(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}

int main(int argc, char** argv) {
  magpie::bench::harness h("vector_add");
  // 4099 and 1M+3 are not multiples of 8: they catch kernels that mishandle the tail.
  // The timed size (last) is 4M floats: 48 MiB of traffic, more than a typical LLC.
  h.sizes({{"n=1000", {1000}}, {"n=4099", {4099}}, {"n=1M+3", {(1 << 20) + 3}}, {"n=4M", {1 << 22}}});
  return h.run(argc, argv, [](magpie::bench::trial& t) {
    const int64_t n = t.dim(0);
    const float* a = t.input<float>("a", {n});
    const float* b = t.input<float>("b", {n});
    float* c = t.output<float>("c", {n});
    return [=] { vector_add(a, b, c, n); };
  });
}
