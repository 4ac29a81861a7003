// Correct host vector add written differently: 8-way unrolled main loop plus a scalar tail.
#include <magpie/bench.hpp>

static void vector_add_unrolled(const float* __restrict a, const float* __restrict b, float* __restrict c,
                                int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) c[i + k] = a[i + k] + b[i + k];
  }
  for (; i < n; ++i) c[i] = a[i] + b[i];  // the tail (n % 8 elements)
}

int main(int argc, char** argv) {
  magpie::bench::harness h("vector_add");
  h.sizes({{"n=1000", {1000}}, {"n=4099", {4099}}, {"n=1M+3", {(1 << 20) + 3}}, {"n=4M", {1 << 22}}});
  return h.run(argc, argv, [](magpie::bench::trial& t) {
    const int64_t n = t.dim(0);
    const float* a = t.input<float>("a", {n});
    const float* b = t.input<float>("b", {n});
    float* c = t.output<float>("c", {n});
    return [=] { vector_add_unrolled(a, b, c, n); };
  });
}
