"""The kernels the example model ships with (MAGPIE_LOOP_KERNELS=baseline, the loop's starting
point): straightforward Triton kernels of the kind a first port produces. Same contracts as
kernels_eager.py. What a better version would change:
  rms_norm  two launches (sum of squares, then apply), the row read twice in 256-wide chunks
  silu_mul  a flat 1-D grid with 128-element blocks and a div/mod per element
  rotary    cos/sin gathered eagerly (index_select + two copies), then one launch per tensor
  attention one program per (sequence, query head) walking the cache in 32-position blocks: each
            KV head is read once per query head sharing it (4x for 16 / 4 heads), and a
            sequence's whole context is one program's serial loop
"""
import torch
import triton
import triton.language as tl

RMS_BLOCK = 256
SILU_BLOCK = 128


@triton.jit
def _rms_norm_sumsq_kernel(x_ptr, rstd_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        m = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=m, other=0.0).to(tl.float32)
        acc += x * x
    ms = tl.sum(acc, axis=0) / n_cols
    tl.store(rstd_ptr + row, 1.0 / tl.sqrt(ms + eps))


@triton.jit
def _rms_norm_apply_kernel(x_ptr, w_ptr, rstd_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    r = tl.load(rstd_ptr + row)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        m = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=m, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * n_cols + cols, (x * r * w).to(out_ptr.dtype.element_ty), mask=m)


def rms_norm(x, weight, eps=1e-6):
    shape = x.shape
    x2 = x.reshape(-1, shape[-1])
    if x2.stride(-1) != 1:
        x2 = x2.contiguous()
    rows, cols = x2.shape
    rstd = torch.empty(rows, dtype=torch.float32, device=x.device)
    out = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    _rms_norm_sumsq_kernel[(rows,)](x2, rstd, cols, x2.stride(0), eps, BLOCK=RMS_BLOCK)
    _rms_norm_apply_kernel[(rows,)](x2, weight, rstd, out, cols, x2.stride(0), BLOCK=RMS_BLOCK)
    return out.reshape(shape)


@triton.jit
def _silu_mul_flat_kernel(gu_ptr, out_ptr, n_elem, inter, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n_elem
    row = offs // inter
    col = offs % inter
    g = tl.load(gu_ptr + row * (2 * inter) + col, mask=m, other=0.0).to(tl.float32)
    u = tl.load(gu_ptr + row * (2 * inter) + inter + col, mask=m, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, (g * tl.sigmoid(g) * u).to(out_ptr.dtype.element_ty), mask=m)


def silu_mul(gate_up):
    gu = gate_up.contiguous()
    inter = gu.shape[-1] // 2
    out = torch.empty(gu.shape[:-1] + (inter,), dtype=gu.dtype, device=gu.device)
    n = out.numel()
    _silu_mul_flat_kernel[(triton.cdiv(n, SILU_BLOCK),)](gu, out, n, inter, BLOCK=SILU_BLOCK)
    return out


@triton.jit
def _rotary_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, n_heads, stride_t, HALF: tl.constexpr):
    t = tl.program_id(0)
    h = tl.program_id(1)
    d = tl.arange(0, HALF)
    src = x_ptr + t * stride_t + h * (2 * HALF)
    dst = out_ptr + (t * n_heads + h) * (2 * HALF)
    x1 = tl.load(src + d).to(tl.float32)
    x2 = tl.load(src + HALF + d).to(tl.float32)
    c = tl.load(cos_ptr + t * HALF + d)
    s = tl.load(sin_ptr + t * HALF + d)
    tl.store(dst + d, (x1 * c - x2 * s).to(out_ptr.dtype.element_ty))
    tl.store(dst + HALF + d, (x2 * c + x1 * s).to(out_ptr.dtype.element_ty))


def _rotary_one(x, c, s):
    t, heads, hd = x.shape
    if x.stride(2) != 1 or x.stride(1) != hd:
        x = x.contiguous()
    out = torch.empty((t, heads, hd), dtype=x.dtype, device=x.device)
    _rotary_kernel[(t, heads)](x, c, s, out, heads, x.stride(0), HALF=hd // 2)
    return out


def rotary(q, k, cos_sin, positions):
    half = q.shape[-1] // 2
    cs = cos_sin.index_select(0, positions)
    c = cs[:, :half].contiguous()
    s = cs[:, half:].contiguous()
    return _rotary_one(q, c, s), _rotary_one(k, c, s)


ATTN_BLOCK = 32


@triton.jit
def _decode_attn_kernel(q_ptr, k_ptr, v_ptr, slot_ptr, len_ptr, out_ptr, scale, n_heads,
                        s_slot, s_pos, s_head, GROUP: tl.constexpr, HD: tl.constexpr, BLOCK_N: tl.constexpr):
    b = tl.program_id(0)
    h = tl.program_id(1)
    slot = tl.load(slot_ptr + b).to(tl.int64)
    n = tl.load(len_ptr + b).to(tl.int32)
    d = tl.arange(0, HD)
    q = tl.load(q_ptr + (b * n_heads + h) * HD + d).to(tl.float32)
    base = slot * s_slot + (h // GROUP) * s_head
    m_i = tl.zeros([1], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([1], dtype=tl.float32)
    acc = tl.zeros([HD], dtype=tl.float32)
    for start in range(0, n, BLOCK_N):
        offs = start + tl.arange(0, BLOCK_N)
        valid = offs < n
        kv_off = base + offs[:, None].to(tl.int64) * s_pos + d[None, :]
        k = tl.load(k_ptr + kv_off, mask=valid[:, None], other=0.0).to(tl.float32)
        s = tl.sum(k * q[None, :], 1) * scale
        s = tl.where(valid, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 0))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new)
        l_i = l_i * alpha + tl.sum(p, 0)
        v = tl.load(v_ptr + kv_off, mask=valid[:, None], other=0.0).to(tl.float32)
        acc = acc * alpha + tl.sum(p[:, None] * v, 0)
        m_i = m_new
    tl.store(out_ptr + (b * n_heads + h) * HD + d, (acc / l_i).to(out_ptr.dtype.element_ty))


def attention(q, k_cache, v_cache, slots, seq_lens):
    b, nh, hd = q.shape
    q = q.contiguous()
    out = torch.empty_like(q)
    _decode_attn_kernel[(b, nh)](q, k_cache, v_cache, slots, seq_lens, out, hd ** -0.5, nh,
                                 k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
                                 GROUP=nh // k_cache.shape[2], HD=hd, BLOCK_N=ATTN_BLOCK)
    return out


OPS = {"rms_norm": rms_norm, "silu_mul": silu_mul, "rotary": rotary, "attention": attention}
