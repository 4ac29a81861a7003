// vLLM-like rotary embedding (look-alike): the kernel gained a cache_t template parameter and
// the rope_dim_offset / inverse parameters after the traced build.
namespace vllm {

template <typename scalar_t, typename cache_t, bool IS_NEOX>
__global__ void rotary_embedding_kernel(const int64_t* __restrict__ positions, scalar_t* __restrict__ query,
                                        scalar_t* __restrict__ key, const cache_t* __restrict__ cos_sin_cache,
                                        const int rot_dim, const int64_t query_stride, const int64_t key_stride,
                                        const int64_t head_stride, const int num_heads, const int num_kv_heads,
                                        const int head_size, const int64_t rope_dim_offset, const bool inverse) {
  const int64_t pos = positions[blockIdx.x];
  if (threadIdx.x < rot_dim) query[pos * query_stride + threadIdx.x] *= inverse ? -1 : 1;
}

}  // namespace vllm
