// Another project's reference copy of vllm::rms_norm_kernel for its tests (look-alike).
namespace vllm {

template <typename scalar_t, int VEC_SIZE, int NUM_DIMS>
__global__ void rms_norm_kernel(scalar_t* __restrict__ out, const scalar_t* __restrict__ input,
                                const int64_t input_stride_d2, const int64_t input_stride_d3,
                                const int64_t input_stride_d4, const int64_t input_shape_d2,
                                const int64_t input_shape_d3, const scalar_t* __restrict__ weight,
                                const float epsilon, const int num_tokens, const int hidden_size) {
  // naive reference: one thread per row
  float sum = 0.f;
  for (int i = 0; i < hidden_size; ++i) sum += float(input[i]) * float(input[i]);
  out[blockIdx.x] = scalar_t(1.f / sqrtf(sum / hidden_size + epsilon)) * weight[0];
}

}  // namespace vllm
