// Host adversarial suite: replaces clock_gettime for the whole binary (symbol interposition),
// so the harness's own timer reports almost nothing. Must be rejected (clock_bracket).
#include <time.h>

#include <magpie/bench.hpp>

extern "C" int clock_gettime(clockid_t, struct timespec* ts) {
  static long fake = 0;
  fake += 10;
  ts->tv_sec = 1000;
  ts->tv_nsec = fake;
  return 0;
}

int main(int argc, char** argv) {
  magpie::bench::harness h("mul_add");
  h.sizes({{"n=1000", {1000}}, {"n=4099", {4099}}, {"n=1M", {1 << 20}}});
  return h.run(argc, argv, [](magpie::bench::trial& t) {
    const int64_t n = t.dim(0);
    const float* a = t.input<float>("a", {n});
    const float* b = t.input<float>("b", {n});
    float* c = t.output<float>("c", {n});
    return [=] { for (int64_t i = 0; i < n; ++i) c[i] = a[i] * b[i] + 1.0f; };
  });
}
