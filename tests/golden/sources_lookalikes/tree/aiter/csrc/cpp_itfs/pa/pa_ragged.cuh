// aiter-like paged attention over a ragged KV layout (look-alike): a VERSION_ID first, an
// AttentionVariant last, kv_indptr-style paging, soft-cap and scale pointers.
#pragma once
#include "ck_tile/ops/fmha.hpp"

template <int VERSION_ID, typename scalar_t, typename cache_t, vllm::Fp8KVCacheDataType KV_DTYPE, int BLOCK_SIZE,
          int HEAD_SIZE, int NUM_THREADS, bool ALIBI_ENABLED, int GQA_RATIO, int MTP, typename AttentionVariant>
__global__ __launch_bounds__(NUM_THREADS) void paged_attention_ll4mi_QKV_mfma16_kernel(
    const scalar_t* __restrict__ q, const cache_t* __restrict__ k_cache, const cache_t* __restrict__ v_cache,
    const float scale, const int* __restrict__ kv_indptr, const int* __restrict__ kv_page_indices,
    const int* __restrict__ kv_last_page_lens, const float* __restrict__ alibi_slopes, const int q_stride,
    const int kv_block_stride, const int kv_head_stride, const int kv_seq_stride, float* __restrict__ exp_sums,
    float* __restrict__ max_logits, scalar_t* __restrict__ out, float logits_soft_cap, float logits_soft_cap_rcp,
    const float* q_scale_ptr, const float* k_scale_ptr, const float* v_scale_ptr, const AttentionVariant* variant) {
  const int seq = blockIdx.x;
  if (threadIdx.x == 0) max_logits[seq] = logits_soft_cap * kv_indptr[seq + 1];
}

template <typename scalar_t, typename OUTT, int HEAD_SIZE, int NUM_THREADS, int PARTITION_SIZE, int NPAR_LOOPS,
          bool ENABLE_LAST_PAGE_LENS>
__global__ __launch_bounds__(NUM_THREADS) void paged_attention_ll4mi_reduce_kernel(
    OUTT* __restrict__ out, const float* __restrict__ exp_sums, const float* __restrict__ max_logits,
    const scalar_t* __restrict__ tmp_out, const int* __restrict__ kv_indptr,
    const int* __restrict__ kv_last_page_lens, const int block_size, const int max_num_partitions,
    const float* __restrict__ fp8_out_scale_ptr) {
  out[blockIdx.x] = static_cast<OUTT>(max_logits[blockIdx.x] - exp_sums[blockIdx.x] * block_size);
}
