// Protocol test fixture: every dtype, a scalar, and two failing sizes.
//   size 0 "ok":    copies each input to an output of the same dtype; out_sum = x + y (float)
//   size 1 "throw": the setup asks for a dimension the size does not have -> trial error
//   size 2 "oob":   writes one element past the end of out_sum -> guard-zone error
// Every launch increments a counter printed to stderr at exit ("edge: launches=N").
#include <magpie/bench.hpp>

#include <cstdio>
#include <cstdlib>

namespace mb = magpie::bench;

static long g_launches = 0;
static void print_launches() { std::fprintf(stderr, "edge: launches=%ld\n", g_launches); }

template <class T>
static void copy(const T* in, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i];
}

int main(int argc, char** argv) {
  std::atexit(print_launches);
  mb::harness h("edge");
  h.sizes({{"ok", {37}}, {"throw", {5}}, {"oob", {16}}});
  h.timed(0);
  return h.run(argc, argv, [](mb::trial& t) {
    const int64_t n = t.dim(0);
    if (t.size_label() == "throw") (void)t.dim(3);
    const float* x = t.input<float>("x", {n});
    const float* y = t.input<float>("y", {n}, mb::normal(10, 2));
    const double* d = t.input<double>("d", {n}, mb::constant(0.25));
    const uint16_t* hf = t.input<mb::f16>("h", {n});
    const uint16_t* bf = t.input<mb::bf16>("bf", {n, 1});
    const int32_t* i32 = t.input<int32_t>("i32", {n}, mb::integers(-5, 5));
    const int64_t* i64 = t.input<int64_t>("i64", {n});
    const int8_t* i8 = t.input<int8_t>("i8", {n});
    const uint8_t* u8 = t.input<uint8_t>("u8", {n});
    const bool* bl = t.input<bool>("bool", {n});
    float* sum = t.output<float>("out_sum", {n});
    double* od = t.output<double>("out_d", {n});
    uint16_t* oh = t.output<mb::f16>("out_h", {n});
    uint16_t* obf = t.output<mb::bf16>("out_bf", {n, 1});
    int32_t* o32 = t.output<int32_t>("out_i32", {n});
    int64_t* o64 = t.output<int64_t>("out_i64", {n});
    int8_t* o8 = t.output<int8_t>("out_i8", {n});
    uint8_t* ou8 = t.output<uint8_t>("out_u8", {n});
    bool* obl = t.output<bool>("out_bool", {n});
    float* untouched = t.output<float>("out_untouched", {3});
    float* work = t.scratch<float>("work", {n});
    t.scalar("n", static_cast<double>(n));
    const bool oob = t.size_label() == "oob";
    (void)untouched;
    return [=] {
      ++g_launches;
      for (int64_t i = 0; i < n; ++i) work[i] = x[i] + y[i];
      copy(work, sum, n);
      if (oob) sum[n] = 1.0f;
      copy(d, od, n);
      copy(hf, oh, n);
      copy(bf, obf, n);
      copy(i32, o32, n);
      copy(i64, o64, n);
      copy(i8, o8, n);
      copy(u8, ou8, n);
      copy(bl, obl, n);
    };
  });
}
