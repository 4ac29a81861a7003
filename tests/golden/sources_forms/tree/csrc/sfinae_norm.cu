// Fixture (written for magpie's tests): SFINAE-overloaded kernels as vLLM declares them.
#include <type_traits>

namespace demo {

template <typename T>
struct _typeConvert {
  static constexpr bool exists = false;
};

/* Vectorised overload: only for widths > 0 and types with a converter. */
template <typename scalar_t, int width>
__global__ std::enable_if_t<(width > 0) && _typeConvert<scalar_t>::exists>
fused_add_rms_norm_kernel(scalar_t* __restrict__ input, const long input_stride,
                          scalar_t* __restrict__ residual, const scalar_t* __restrict__ weight,
                          const float epsilon, const int num_tokens, const int hidden_size) {
  input[0] = residual[0] + weight[0];
}

/* Generic overload: the width is unused. */
template <typename scalar_t, int width>
__global__ std::enable_if_t<(width == 0) || !_typeConvert<scalar_t>::exists>
fused_add_rms_norm_kernel(scalar_t* __restrict__ input, const long input_stride,
                          scalar_t* __restrict__ residual, const scalar_t* __restrict__ weight,
                          const float epsilon, const int num_tokens, const int hidden_size) {
  input[1] = residual[1] * weight[1];
}

template <typename T, int N>
__global__ typename std::enable_if<(N > 1), void>::type
pairwise_scale_kernel(T* out, const T* in) {
  out[0] = in[0];
}

}  // namespace demo
