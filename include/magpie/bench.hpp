// magpie::bench — the C++ / CUDA / HIP kernel harness of magpie (protocol version 1, see
// docs/harness-protocol.md; user guide in docs/bench-harness.md). Header-only, C++17.
//
//   #include <magpie/bench.hpp>
//   int main(int argc, char** argv) {
//     magpie::bench::harness h("vector_add");
//     h.sizes({{"n=1000", {1000}}, {"n=16M", {1 << 24}}});      // the last size is timed
//     return h.run(argc, argv, [](magpie::bench::trial& t) {
//       int64_t n = t.dim(0);
//       const float* a = t.input<float>("a", {n});
//       float* c = t.output<float>("c", {n});
//       return [=] { my_kernel(a, c, n); };                      // one launch
//     });
//   }
//
// Backend: compiled by nvcc -> CUDA, by hipcc -> HIP, otherwise host (pointers are host
// memory). A .cpp compiled by g++ that launches CUDA code from another translation unit may
// define MAGPIE_BENCH_CUDA (and link cudart) to get the CUDA backend without the blocking kernel.
#pragma once

#include <sys/stat.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "bench_detail.hpp"
#include "bench_host.hpp"

namespace magpie {
namespace bench {

/// One problem size: a label (e.g. "n=4099") and the dimensions the setup reads with t.dim(i).
struct size_spec {
  std::string label;
  std::vector<int64_t> dims;
};

/// Element type traits: `storage` is the pointer type handed to the kernel, `dt` the dtype
/// recorded in the manifest, `convert` maps a generated double to the element.
template <class T>
struct type_info;

#define MAGPIE_BENCH_PLAIN_TYPE(T, DT, EXPR)                       \
  template <>                                                      \
  struct type_info<T> {                                            \
    using storage = T;                                             \
    static constexpr dtype dt = dtype::DT;                         \
    static storage convert(double v) { return EXPR; }              \
  };
MAGPIE_BENCH_PLAIN_TYPE(float, float32, static_cast<float>(v))
MAGPIE_BENCH_PLAIN_TYPE(double, float64, v)
MAGPIE_BENCH_PLAIN_TYPE(int8_t, int8, detail::clamp_int<int8_t>(v))
MAGPIE_BENCH_PLAIN_TYPE(int16_t, int16, detail::clamp_int<int16_t>(v))
MAGPIE_BENCH_PLAIN_TYPE(int32_t, int32, detail::clamp_int<int32_t>(v))
MAGPIE_BENCH_PLAIN_TYPE(int64_t, int64, detail::clamp_int<int64_t>(v))
MAGPIE_BENCH_PLAIN_TYPE(uint8_t, uint8, detail::clamp_int<uint8_t>(v))
MAGPIE_BENCH_PLAIN_TYPE(uint16_t, uint16, detail::clamp_int<uint16_t>(v))
MAGPIE_BENCH_PLAIN_TYPE(uint32_t, uint32, detail::clamp_int<uint32_t>(v))
MAGPIE_BENCH_PLAIN_TYPE(uint64_t, uint64, detail::clamp_int<uint64_t>(v))
MAGPIE_BENCH_PLAIN_TYPE(bool, boolean, v != 0.0)
#undef MAGPIE_BENCH_PLAIN_TYPE

template <>
struct type_info<f16> {
  using storage = uint16_t;  ///< IEEE binary16 bits
  static constexpr dtype dt = dtype::float16;
  static storage convert(double v) { return detail::float_to_half_bits(static_cast<float>(v)); }
};
template <>
struct type_info<bf16> {
  using storage = uint16_t;  ///< bfloat16 bits
  static constexpr dtype dt = dtype::bfloat16;
  static storage convert(double v) { return detail::float_to_bf16_bits(static_cast<float>(v)); }
};

template <class T>
using ptr = typename type_info<T>::storage*;

}  // namespace bench
}  // namespace magpie

#if defined(__HIPCC__) || defined(__CUDACC__) || defined(MAGPIE_BENCH_CUDA)
#include "bench_gpu.hpp"
namespace magpie {
namespace bench {
namespace detail {
using backend = gpu_backend;
}
}  // namespace bench
}  // namespace magpie
#else
namespace magpie {
namespace bench {
namespace detail {
using backend = host_backend;
}
}  // namespace bench
}  // namespace magpie
#endif

#include "bench_trial.hpp"
#include "bench_run.hpp"
