// Gate fixture: returns all zeros (degenerate output; must be REJECTED).
// Kernel contract: c[i] = a[i] * b[i] + 1 (float32). Used by the lead's gate tests.
#include <magpie/bench.hpp>

int main(int argc, char** argv) {
  magpie::bench::harness h("mul_add");
  h.sizes({{"n=1000", {1000}}, {"n=4099", {4099}}, {"n=65536", {65536}}});
  return h.run(argc, argv, [](magpie::bench::trial& t) {
    const int64_t n = t.dim(0);
    float* a = t.input<float>("a", {n});
    const float* b = t.input<float>("b", {n});
    float* c = t.output<float>("c", {n});
    return [=] { for (int64_t i = 0; i < n; ++i) c[i] = 0.0f; (void)a; (void)b; };
  });
}
