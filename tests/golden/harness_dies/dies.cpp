// A correct vector add whose timing process exits during its 12th launch (a crash or a candidate
// that leaves mid-timing): the supervisor then writes to a closed control pipe.
#include <cstdlib>
#include <unistd.h>
#include <magpie/bench.hpp>

int main(int argc, char** argv) {
  magpie::bench::harness h("vector_add");
  h.sizes({{"n=1000", {1000}}, {"n=4099", {4099}}, {"n=1M+3", {(1 << 20) + 3}}, {"n=4M", {1 << 22}}});
  static int launches = 0;
  const char* mode = std::getenv("MAGPIE_BENCH_MODE");
  const bool timing = mode && std::string(mode) == "timing";
  return h.run(argc, argv, [=](magpie::bench::trial& t) {
    const int64_t n = t.dim(0);
    const float* a = t.input<float>("a", {n});
    const float* b = t.input<float>("b", {n});
    float* c = t.output<float>("c", {n});
    return [=] {
      if (timing && ++launches == 12) _exit(0);
      for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
    };
  });
}
