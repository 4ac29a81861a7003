// vLLM-like RMS norm and activation (look-alikes).
namespace vllm {

template <typename scalar_t, int VEC_SIZE, int NUM_DIMS>
__global__ void rms_norm_kernel(scalar_t* __restrict__ out, const scalar_t* __restrict__ input,
                                const int64_t input_stride_d2, const int64_t input_stride_d3,
                                const int64_t input_stride_d4, const int64_t input_shape_d2,
                                const int64_t input_shape_d3, const scalar_t* __restrict__ weight,
                                const float epsilon, const int num_tokens, const int hidden_size) {
  float sum = 0.f;
  for (int i = threadIdx.x; i < hidden_size; i += blockDim.x) sum += float(input[i]) * float(input[i]);
  out[blockIdx.x] = scalar_t(rsqrtf(sum / hidden_size + epsilon)) * weight[0];
}

template <typename scalar_t, scalar_t (*ACT_FN)(const scalar_t&), bool act_first>
__global__ void act_and_mul_kernel(scalar_t* __restrict__ out, const scalar_t* __restrict__ input, const int d) {
  for (int i = threadIdx.x; i < d; i += blockDim.x) out[i] = ACT_FN(input[i]) * input[d + i];
}

}  // namespace vllm
