// Subtly wrong host vector add: the 8-way unrolled loop has no tail, so the last n % 8
// elements are never written. Right on n=1000 and on the timed size n=4M (multiples of 8),
// wrong on n=4099 and n=1M+3, where the tail keeps the harness's poison (NaN).
#include <magpie/bench.hpp>

static void vector_add_no_tail(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = 0; i + 8 <= n; i += 8) {  // BUG: drops the n % 8 tail
    for (int k = 0; k < 8; ++k) c[i + k] = a[i + k] + b[i + k];
  }
}

int main(int argc, char** argv) {
  magpie::bench::harness h("vector_add");
  h.sizes({{"n=1000", {1000}}, {"n=4099", {4099}}, {"n=1M+3", {(1 << 20) + 3}}, {"n=4M", {1 << 22}}});
  return h.run(argc, argv, [](magpie::bench::trial& t) {
    const int64_t n = t.dim(0);
    const float* a = t.input<float>("a", {n});
    const float* b = t.input<float>("b", {n});
    float* c = t.output<float>("c", {n});
    return [=] { vector_add_no_tail(a, b, c, n); };
  });
}
