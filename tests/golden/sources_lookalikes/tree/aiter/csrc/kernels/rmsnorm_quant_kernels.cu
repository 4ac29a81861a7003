// aiter-like fused add + RMS norm + quantisation (look-alike). ROCm's clang mangles its bf16
// instances with DF16b (std::bfloat16_t).
namespace aiter {

template <typename DTYPE, typename QTYPE, int BlockSize, int thread_data_size, bool FUSE_ADD, bool INTERLEAVE,
          bool USE_SMOOTH, int group>
__global__ void add_rmsnorm_quant_kernel(QTYPE* out, DTYPE* residual_out, float* scale, DTYPE* input,
                                         DTYPE* residual_in, DTYPE* weight, double epsilon, int m, int n,
                                         int stride_in, int stride_res_in, int stride_out, int stride_res_out,
                                         int group_size, bool shuffle_scale) {
  const int row = blockIdx.x;
  if (row < m && threadIdx.x == 0) scale[row] = static_cast<float>(epsilon) * n;
}

}  // namespace aiter
