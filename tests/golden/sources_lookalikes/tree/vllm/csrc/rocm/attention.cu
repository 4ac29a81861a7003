// vLLM-like ROCm paged attention (look-alike written for the test).
#include "attention_common.h"

template <typename scalar_t, typename cache_t, vllm::Fp8KVCacheDataType KV_DTYPE, typename OUTT, int BLOCK_SIZE,
          int HEAD_SIZE, int NUM_THREADS, bool ALIBI_ENABLED, int GQA_RATIO, MFMAType MFMA_TYPE>
__global__ __launch_bounds__(NUM_THREADS) void paged_attention_ll4mi_QKV_mfma16_kernel(
    const scalar_t* __restrict__ q, const cache_t* __restrict__ k_cache, const cache_t* __restrict__ v_cache,
    const int num_kv_heads, const float scale, const int* __restrict__ block_tables,
    const int* __restrict__ seq_lens, const int* __restrict__ query_start_loc_ptr, const int max_num_blocks_per_seq,
    const float* __restrict__ alibi_slopes, const int q_stride, const int kv_block_stride, const int kv_head_stride,
    float* __restrict__ exp_sums, float* __restrict__ max_logits, scalar_t* __restrict__ out,
    OUTT* __restrict__ final_out, int max_ctx_blocks, const float* k_scale, const float* v_scale) {
  const int seq = blockIdx.x;
  if (threadIdx.x == 0) exp_sums[seq] = scale * seq_lens[seq];
}

template <typename scalar_t, typename OUTT, int HEAD_SIZE, int NUM_THREADS, int PARTITION_SIZE, int NPAR_LOOPS>
__global__ __launch_bounds__(NUM_THREADS) void paged_attention_ll4mi_reduce_kernel(
    OUTT* __restrict__ out, const float* __restrict__ exp_sums, const float* __restrict__ max_logits,
    const scalar_t* __restrict__ tmp_out, const int* __restrict__ seq_lens,
    const int* __restrict__ query_start_loc_ptr, const int max_num_partitions,
    const float* __restrict__ fp8_out_scale_ptr) {
  out[blockIdx.x] = static_cast<OUTT>(exp_sums[blockIdx.x] + max_logits[blockIdx.x]);
}
