"""Fused SiLU-and-multiply in Triton with an off-by-one grid: `n // BLOCK` programs instead of
`cdiv(n, BLOCK)`.

Subtly wrong: exact when n is a multiple of BLOCK (the timed size, 16M), but the last
n % BLOCK elements are never written otherwise (torch.empty_like leaves garbage)."""
import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _silu_mul_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * tl.sigmoid(a) * b, mask=mask)


def silu_mul_triton_tail(a, b):
    out = torch.empty_like(a)
    n = a.numel()
    _silu_mul_kernel[(n // BLOCK,)](a, b, out, n, BLOCK=BLOCK)  # BUG: drops the tail block
    return out
