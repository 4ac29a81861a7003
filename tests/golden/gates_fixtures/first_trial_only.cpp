// Gate fixture: right only on the first trial it runs: caches that result and replays it afterwards (fails fresh seeds; must be REJECTED).
// Kernel contract: c[i] = a[i] * b[i] + 1 (float32). Used by the lead's gate tests.
#include <magpie/bench.hpp>
#include <vector>

// Computes the first call's result, then returns that cached result for every later call
// (zero-padded / truncated to the current n) - a "memorised answer" cheat.
static void replay_first(const float* a, const float* b, float* c, int64_t n) {
  static std::vector<float> cache;
  if (cache.empty()) {
    cache.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) cache[static_cast<size_t>(i)] = a[i] * b[i] + 1.0f;
  }
  for (int64_t i = 0; i < n; ++i) c[i] = i < static_cast<int64_t>(cache.size()) ? cache[static_cast<size_t>(i)] : 0.0f;
}
int main(int argc, char** argv) {
  magpie::bench::harness h("mul_add");
  h.sizes({{"n=1000", {1000}}, {"n=4099", {4099}}, {"n=65536", {65536}}});
  return h.run(argc, argv, [](magpie::bench::trial& t) {
    const int64_t n = t.dim(0);
    float* a = t.input<float>("a", {n});
    const float* b = t.input<float>("b", {n});
    float* c = t.output<float>("c", {n});
    return [=] { replay_first(a, b, c, n); };
  });
}
