// Correct but slower host vector add: two passes over memory (c = a, then c += b), i.e.
// 5 array transfers instead of 3 on the timed size (larger than the LLC).
#include <magpie/bench.hpp>

static void vector_add_twopass(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i];
  for (int64_t i = 0; i < n; ++i) c[i] += b[i];
}

int main(int argc, char** argv) {
  magpie::bench::harness h("vector_add");
  h.sizes({{"n=1000", {1000}}, {"n=4099", {4099}}, {"n=1M+3", {(1 << 20) + 3}}, {"n=4M", {1 << 22}}});
  return h.run(argc, argv, [](magpie::bench::trial& t) {
    const int64_t n = t.dim(0);
    const float* a = t.input<float>("a", {n});
    const float* b = t.input<float>("b", {n});
    float* c = t.output<float>("c", {n});
    return [=] { vector_add_twopass(a, b, c, n); };
  });
}
