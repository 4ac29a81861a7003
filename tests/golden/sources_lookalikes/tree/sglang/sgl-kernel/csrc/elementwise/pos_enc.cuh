// SGLang-like rotary embedding in the global namespace (look-alike of the copy that predates
// vLLM's cache_t parameter).
#pragma once

template <typename scalar_t, bool IS_NEOX>
__global__ void rotary_embedding_kernel(const int64_t* __restrict__ positions, scalar_t* __restrict__ query,
                                        scalar_t* __restrict__ key, const scalar_t* __restrict__ cos_sin_cache,
                                        const int rot_dim, const int64_t query_stride, const int64_t key_stride,
                                        const int64_t head_stride, const int num_heads, const int num_kv_heads,
                                        const int head_size) {
  const int64_t pos = positions[blockIdx.x];
  if (threadIdx.x < rot_dim) key[pos * key_stride + threadIdx.x] += cos_sin_cache[threadIdx.x];
}
