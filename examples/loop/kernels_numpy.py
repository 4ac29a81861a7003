"""numpy (CPU, float32) versions of the pluggable ops, for the loop's CI dry run (server.py
--backend numpy) and the CPU compare YAMLs (compare_*_cpu.yaml). Same contracts as
kernels_eager.py with float32 instead of bf16.

Each implementation mirrors the structure of its Triton counterpart and, while the numpy
server profiles, records one "kernel" per Triton launch it stands for, under that kernel's
name (e.g. rms_norm_baseline -> _rms_norm_sumsq_kernel + _rms_norm_apply_kernel), so the dry
run's trace maps to kernels_baseline.py / kernels_triton.py exactly as a GPU trace does. The
baselines are slower for the same reasons as on the GPU (two passes in chunks, flat index
arithmetic, per-tensor work); the *_swapped / *_interleaved candidates are wrong on purpose.
"""
import contextlib

import numpy as np

RECORDER = None  # set by model_numpy.py while profiling: RECORDER(kernel_name) -> context manager
CHUNK = 32


def _k(name):
    return RECORDER(name) if RECORDER is not None else contextlib.nullcontext()


# ---- rms_norm(x[T,H], w[H], eps) -> [T,H]
def rms_norm_eager(x, w, eps=1e-6):
    ms = np.mean(np.square(x, dtype=np.float32), axis=-1, keepdims=True)
    return (x * (1.0 / np.sqrt(ms + eps)) * w).astype(np.float32)


def rms_norm_baseline(x, w, eps=1e-6):
    rows, cols = x.shape
    with _k("_rms_norm_sumsq_kernel"):
        acc = np.zeros((rows, 1), dtype=np.float32)
        for off in range(0, cols, CHUNK):
            c = x[:, off:off + CHUNK]
            acc += np.sum(c * c, axis=-1, keepdims=True)
        rstd = (1.0 / np.sqrt(acc / cols + eps)).astype(np.float32)
    with _k("_rms_norm_apply_kernel"):
        out = np.empty_like(x, dtype=np.float32)
        for off in range(0, cols, CHUNK):
            out[:, off:off + CHUNK] = x[:, off:off + CHUNK] * rstd * w[off:off + CHUNK]
    return out


def rms_norm_onepass(x, w, eps=1e-6):
    with _k("_rms_norm_onepass_kernel"):
        return rms_norm_eager(x, w, eps)


# ---- silu_mul(gate_up[T,2I]) -> [T,I]
def _silu(g):
    return g / (1.0 + np.exp(-g))


def silu_mul_eager(gate_up):
    i = gate_up.shape[-1] // 2
    return (_silu(gate_up[:, :i]) * gate_up[:, i:]).astype(np.float32)


def silu_mul_baseline(gate_up):
    with _k("_silu_mul_flat_kernel"):
        rows, two_i = gate_up.shape
        inter = two_i // 2
        flat = gate_up.reshape(-1)
        offs = np.arange(rows * inter)
        row, col = offs // inter, offs % inter
        g = flat[row * two_i + col]
        u = flat[row * two_i + inter + col]
        return (_silu(g) * u).astype(np.float32).reshape(rows, inter)


def silu_mul_2d(gate_up):
    with _k("_silu_mul_2d_kernel"):
        return silu_mul_eager(gate_up)


def silu_mul_swapped(gate_up):
    with _k("_silu_mul_2d_kernel"):
        i = gate_up.shape[-1] // 2
        return (_silu(gate_up[:, i:]) * gate_up[:, :i]).astype(np.float32)


# ---- rotary(q[T,nh,hd], k[T,nkv,hd], cos_sin[P,hd], positions[T]) -> (q', k')
def _rotate(x, c, s):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1).astype(np.float32)


def rotary_eager(q, k, cos_sin, positions):
    half = q.shape[-1] // 2
    cs = cos_sin[positions]
    c, s = cs[:, None, :half], cs[:, None, half:]
    return _rotate(q, c, s), _rotate(k, c, s)


def _rotary_per_head(x, c, s):
    out = np.empty_like(x, dtype=np.float32)
    with _k("_rotary_kernel"):
        for h in range(x.shape[1]):
            out[:, h:h + 1] = _rotate(x[:, h:h + 1], c[:, None], s[:, None])
    return out


def rotary_baseline(q, k, cos_sin, positions):
    half = q.shape[-1] // 2
    cs = np.take(cos_sin, positions, axis=0)
    c, s = np.ascontiguousarray(cs[:, :half]), np.ascontiguousarray(cs[:, half:])
    return _rotary_per_head(q, c, s), _rotary_per_head(k, c, s)


def rotary_fused(q, k, cos_sin, positions):
    with _k("_rotary_fused_kernel"):
        return rotary_eager(q, k, cos_sin, positions)


def rotary_interleaved(q, k, cos_sin, positions):
    with _k("_rotary_fused_kernel"):
        half = q.shape[-1] // 2
        cs = cos_sin[positions]
        c, s = cs[:, None, :half], cs[:, None, half:]

        def rot(x):
            x1, x2 = x[..., 0::2], x[..., 1::2]
            out = np.empty_like(x, dtype=np.float32)
            out[..., 0::2] = x1 * c - x2 * s
            out[..., 1::2] = x2 * c + x1 * s
            return out
        return rot(q), rot(k)


# ---- attention(q[B,nh,hd], k_cache[S,L,nkv,hd], v_cache, slots[B], seq_lens[B]) -> [B,nh,hd]
def _attend(q, k, v):
    """q[h, hd], k/v[n, h, hd] -> [h, hd]."""
    s = np.einsum("hd,nhd->hn", q, k) / np.sqrt(q.shape[-1])
    s = np.exp(s - s.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    return np.einsum("hn,nhd->hd", s, v)


def attention_eager(q, k_cache, v_cache, slots, seq_lens):
    g = q.shape[1] // k_cache.shape[2]
    out = np.empty_like(q, dtype=np.float32)
    for b, (slot, n) in enumerate(zip(slots, seq_lens)):
        k = np.repeat(k_cache[slot, :n], g, axis=1)
        v = np.repeat(v_cache[slot, :n], g, axis=1)
        out[b] = _attend(q[b], k, v)
    return out.astype(np.float32)


def attention_baseline(q, k_cache, v_cache, slots, seq_lens):
    """One (sequence, query head) at a time, the context in blocks with an online softmax."""
    g = q.shape[1] // k_cache.shape[2]
    out = np.empty_like(q, dtype=np.float32)
    with _k("_decode_attn_kernel"):
        for b, (slot, n) in enumerate(zip(slots, seq_lens)):
            for h in range(q.shape[1]):
                m, l, acc = -np.inf, 0.0, np.zeros(q.shape[2], np.float32)
                for start in range(0, int(n), CHUNK):
                    k = k_cache[slot, start:min(start + CHUNK, n), h // g]
                    v = v_cache[slot, start:min(start + CHUNK, n), h // g]
                    s = k @ q[b, h] / np.sqrt(q.shape[2])
                    m_new = max(m, float(s.max()))
                    p = np.exp(s - m_new)
                    a = np.exp(m - m_new)
                    l, acc, m = l * a + p.sum(), acc * a + p @ v, m_new
                out[b, h] = acc / l
    return out


def _attention_split(q, k_cache, v_cache, slots, seq_lens, extra):
    g = q.shape[1] // k_cache.shape[2]
    out = np.empty_like(q, dtype=np.float32)
    with _k("_decode_attn_split_kernel"):
        for b, (slot, n) in enumerate(zip(slots, seq_lens)):
            k = np.repeat(k_cache[slot, :n + extra], g, axis=1)
            v = np.repeat(v_cache[slot, :n + extra], g, axis=1)
            out[b] = _attend(q[b], k, v)
    with _k("_decode_attn_reduce_kernel"):
        return out.astype(np.float32)


def attention_split(q, k_cache, v_cache, slots, seq_lens):
    return _attention_split(q, k_cache, v_cache, slots, seq_lens, 0)


def attention_offbyone(q, k_cache, v_cache, slots, seq_lens):
    return _attention_split(q, k_cache, v_cache, slots, seq_lens, 1)


def rope_cache(max_pos, head_dim, theta):
    inv = 1.0 / (theta ** (np.arange(0, head_dim, 2, dtype=np.float32) / head_dim))
    ang = np.arange(max_pos, dtype=np.float32)[:, None] * inv[None, :]
    return np.concatenate([np.cos(ang), np.sin(ang)], axis=-1).astype(np.float32)
