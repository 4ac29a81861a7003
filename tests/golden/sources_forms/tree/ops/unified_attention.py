# Fixture: an older tree that still has one unified-attention Triton kernel.
import triton
import triton.language as tl


@triton.jit
def kernel_unified_attention(q_ptr, k_ptr, v_ptr, out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr, tl.load(q_ptr))


@triton.jit
def kernel_unified_attention_3d(q_ptr, k_ptr, v_ptr, out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr, tl.load(k_ptr))
