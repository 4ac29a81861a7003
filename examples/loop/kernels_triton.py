"""Candidate kernels for the loop (same contracts as kernels_eager.py), one or more per op, and
one subtly wrong candidate per op so the correctness gate has something to reject:
  rms_norm_onepass     one launch, the whole row in registers (read once)
  silu_mul_2d          2-D grid (row, 1024-wide column block), no div/mod
  silu_mul_swapped     WRONG: silu applied to the up half instead of the gate half
  rotary_fused         one launch for q and k, cos/sin read by position inside the kernel
  rotary_interleaved   WRONG: GPT-J pairing (x[2i], x[2i+1]) instead of NeoX rotate-half
  attention_split      flash-decoding: a program per (sequence, KV head, context split) computes all
                       query heads of its KV head with tensor-core dots (each KV byte read once), then
                       a second launch merges the splits by their log-sum-exp
  attention_offbyone   WRONG: the length mask keeps position seq_len (one stale cache entry)
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


ATTN_SPLITS = 16
ATTN_BLOCK_N = 64
ATTN_BLOCK_H = 16  # query heads per program, padded: tl.dot needs 16 rows


@triton.jit
def _decode_attn_split_kernel(q_ptr, k_ptr, v_ptr, slot_ptr, len_ptr, po_ptr, plse_ptr, scale, n_heads,
                              s_slot, s_pos, s_head, GROUP: tl.constexpr, HD: tl.constexpr, SPLITS: tl.constexpr,
                              BLOCK_N: tl.constexpr, BLOCK_H: tl.constexpr, OFF_BY_ONE: tl.constexpr):
    b = tl.program_id(0)
    kvh = tl.program_id(1)
    sp = tl.program_id(2)
    slot = tl.load(slot_ptr + b).to(tl.int64)
    n = tl.load(len_ptr + b).to(tl.int32)
    limit = n + 1 if OFF_BY_ONE else n
    chunk = tl.cdiv(tl.cdiv(n, SPLITS), BLOCK_N) * BLOCK_N
    lo = sp * chunk
    hi = tl.minimum(lo + chunk, limit)
    hh = tl.arange(0, BLOCK_H)
    heads = kvh * GROUP + hh
    hmask = hh < GROUP
    d = tl.arange(0, HD)
    q = tl.load(q_ptr + (b * n_heads + heads[:, None]) * HD + d[None, :], mask=hmask[:, None], other=0.0)
    base = slot * s_slot + kvh * s_head
    m_i = tl.zeros([BLOCK_H], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_H], dtype=tl.float32)
    acc = tl.zeros([BLOCK_H, HD], dtype=tl.float32)
    for start in range(lo, hi, BLOCK_N):
        offs = start + tl.arange(0, BLOCK_N)
        valid = offs < hi
        kv_off = base + offs[:, None].to(tl.int64) * s_pos + d[None, :]
        k = tl.load(k_ptr + kv_off, mask=valid[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        s = tl.where(valid[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + kv_off, mask=valid[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    has = l_i > 0
    o = tl.where(has[:, None], acc / tl.where(has, l_i, 1.0)[:, None], 0.0)
    lse = tl.where(has, m_i + tl.log(tl.where(has, l_i, 1.0)), float("-inf"))
    row = (b * n_heads + heads) * SPLITS + sp
    tl.store(po_ptr + row[:, None] * HD + d[None, :], o, mask=hmask[:, None])
    tl.store(plse_ptr + row, lse, mask=hmask)


@triton.jit
def _decode_attn_reduce_kernel(po_ptr, plse_ptr, out_ptr, SPLITS: tl.constexpr, HD: tl.constexpr):
    bh = tl.program_id(0)
    s = tl.arange(0, SPLITS)
    d = tl.arange(0, HD)
    lse = tl.load(plse_ptr + bh * SPLITS + s)
    w = tl.exp(lse - tl.max(lse, 0))
    o = tl.load(po_ptr + (bh * SPLITS + s[:, None]) * HD + d[None, :])
    out = tl.sum(o * w[:, None], 0) / tl.sum(w, 0)
    tl.store(out_ptr + bh * HD + d, out.to(out_ptr.dtype.element_ty))


def _attention(q, k_cache, v_cache, slots, seq_lens, off_by_one):
    b, nh, hd = q.shape
    nkv = k_cache.shape[2]
    q = q.contiguous()
    po = torch.empty((b, nh, ATTN_SPLITS, hd), dtype=torch.float32, device=q.device)
    plse = torch.empty((b, nh, ATTN_SPLITS), dtype=torch.float32, device=q.device)
    out = torch.empty_like(q)
    _decode_attn_split_kernel[(b, nkv, ATTN_SPLITS)](
        q, k_cache, v_cache, slots, seq_lens, po, plse, hd ** -0.5, nh, k_cache.stride(0), k_cache.stride(1),
        k_cache.stride(2), GROUP=nh // nkv, HD=hd, SPLITS=ATTN_SPLITS, BLOCK_N=ATTN_BLOCK_N, BLOCK_H=ATTN_BLOCK_H,
        OFF_BY_ONE=off_by_one)
    _decode_attn_reduce_kernel[(b * nh,)](po, plse, out, SPLITS=ATTN_SPLITS, HD=hd)
    return out


def attention_split(q, k_cache, v_cache, slots, seq_lens):
    return _attention(q, k_cache, v_cache, slots, seq_lens, False)


def attention_offbyone(q, k_cache, v_cache, slots, seq_lens):
    return _attention(q, k_cache, v_cache, slots, seq_lens, True)


OPS = {"rms_norm_onepass": rms_norm_onepass, "silu_mul_2d": silu_mul_2d, "silu_mul_swapped": silu_mul_swapped,
       "rotary_fused": rotary_fused, "rotary_interleaved": rotary_interleaved, "attention_split": attention_split,
       "attention_offbyone": attention_offbyone}
