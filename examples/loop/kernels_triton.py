"""Candidate kernels for the loop (same contracts as kernels_eager.py), one or more per op, and
one subtly wrong candidate per op so the correctness gate has something to reject:
  rms_norm_onepass     one launch, the whole row in registers (read once)
  silu_mul_2d          2-D grid (row, 1024-wide column block), no div/mod
  silu_mul_swapped     WRONG: silu applied to the up half instead of the gate half
  rotary_fused         one launch for q and k, cos/sin read by position inside the kernel
  rotary_interleaved   WRONG: GPT-J pairing (x[2i], x[2i+1]) instead of NeoX rotate-half
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_onepass_kernel(x_ptr, w_ptr, out_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=m, other=0.0).to(tl.float32)
    ms = tl.sum(x * x, axis=0) / n_cols
    r = 1.0 / tl.sqrt(ms + eps)
    w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * n_cols + cols, (x * r * w).to(out_ptr.dtype.element_ty), mask=m)


def rms_norm_onepass(x, weight, eps=1e-6):
    shape = x.shape
    x2 = x.reshape(-1, shape[-1])
    if x2.stride(-1) != 1:
        x2 = x2.contiguous()
    rows, cols = x2.shape
    out = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(cols)
    warps = 4 if block <= 2048 else 8
    _rms_norm_onepass_kernel[(rows,)](x2, weight, out, cols, x2.stride(0), eps, BLOCK=block, num_warps=warps)
    return out.reshape(shape)


@triton.jit
def _silu_mul_2d_kernel(gu_ptr, out_ptr, inter, SWAP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = cols < inter
    if SWAP:
        g_off = inter
        u_off = 0
    else:
        g_off = 0
        u_off = inter
    g = tl.load(gu_ptr + row * (2 * inter) + g_off + cols, mask=m, other=0.0).to(tl.float32)
    u = tl.load(gu_ptr + row * (2 * inter) + u_off + cols, mask=m, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * inter + cols, (g * tl.sigmoid(g) * u).to(out_ptr.dtype.element_ty), mask=m)


def _silu_mul(gate_up, swap):
    gu = gate_up.contiguous()
    inter = gu.shape[-1] // 2
    rows = gu.numel() // (2 * inter)
    out = torch.empty(gu.shape[:-1] + (inter,), dtype=gu.dtype, device=gu.device)
    _silu_mul_2d_kernel[(rows, triton.cdiv(inter, 1024))](gu, out, inter, SWAP=swap, BLOCK=1024)
    return out


def silu_mul_2d(gate_up):
    return _silu_mul(gate_up, False)


def silu_mul_swapped(gate_up):
    return _silu_mul(gate_up, True)


@triton.jit
def _rotary_fused_kernel(q_ptr, k_ptr, cs_ptr, pos_ptr, qo_ptr, ko_ptr, nq, nk, sq, sk,
                         HALF: tl.constexpr, HEADS: tl.constexpr, INTERLEAVED: tl.constexpr):
    t = tl.program_id(0)
    pos = tl.load(pos_ptr + t)
    h = tl.arange(0, HEADS)[:, None]
    d = tl.arange(0, HALF)[None, :]
    c = tl.load(cs_ptr + pos * (2 * HALF) + d)
    s = tl.load(cs_ptr + pos * (2 * HALF) + HALF + d)
    if INTERLEAVED:
        i1 = 2 * d
        i2 = 2 * d + 1
    else:
        i1 = d
        i2 = d + HALF
    mq = (h < nq) & (d < HALF)
    x1 = tl.load(q_ptr + t * sq + h * (2 * HALF) + i1, mask=mq, other=0.0).to(tl.float32)
    x2 = tl.load(q_ptr + t * sq + h * (2 * HALF) + i2, mask=mq, other=0.0).to(tl.float32)
    dst = qo_ptr + (t * nq + h) * (2 * HALF)
    tl.store(dst + i1, (x1 * c - x2 * s).to(qo_ptr.dtype.element_ty), mask=mq)
    tl.store(dst + i2, (x2 * c + x1 * s).to(qo_ptr.dtype.element_ty), mask=mq)
    mk = (h < nk) & (d < HALF)
    y1 = tl.load(k_ptr + t * sk + h * (2 * HALF) + i1, mask=mk, other=0.0).to(tl.float32)
    y2 = tl.load(k_ptr + t * sk + h * (2 * HALF) + i2, mask=mk, other=0.0).to(tl.float32)
    dk = ko_ptr + (t * nk + h) * (2 * HALF)
    tl.store(dk + i1, (y1 * c - y2 * s).to(ko_ptr.dtype.element_ty), mask=mk)
    tl.store(dk + i2, (y2 * c + y1 * s).to(ko_ptr.dtype.element_ty), mask=mk)


def _heads_view(x):
    t, heads, hd = x.shape
    if x.stride(2) != 1 or x.stride(1) != hd:
        x = x.contiguous()
    return x


def _rotary(q, k, cos_sin, positions, interleaved):
    q, k = _heads_view(q), _heads_view(k)
    t, nq, hd = q.shape
    nk = k.shape[1]
    qo = torch.empty((t, nq, hd), dtype=q.dtype, device=q.device)
    ko = torch.empty((t, nk, hd), dtype=k.dtype, device=k.device)
    cs = cos_sin.contiguous()
    heads = triton.next_power_of_2(max(nq, nk))
    _rotary_fused_kernel[(t,)](q, k, cs, positions, qo, ko, nq, nk, q.stride(0), k.stride(0),
                               HALF=hd // 2, HEADS=heads, INTERLEAVED=interleaved)
    return qo, ko


def rotary_fused(q, k, cos_sin, positions):
    return _rotary(q, k, cos_sin, positions, False)


def rotary_interleaved(q, k, cos_sin, positions):
    return _rotary(q, k, cos_sin, positions, True)


OPS = {"rms_norm_onepass": rms_norm_onepass, "silu_mul_2d": silu_mul_2d, "silu_mul_swapped": silu_mul_swapped,
       "rotary_fused": rotary_fused, "rotary_interleaved": rotary_interleaved}
