"""Eager PyTorch implementations of the model's pluggable ops: the numerical reference of the
loop (every compare YAML checks candidates against these) and a selectable kernel set
(MAGPIE_LOOP_KERNELS=eager). Each op launches several ATen kernels, whose trace names map to
PyTorch's sources, not to this file: see docs/optimization-loop.md ("Why the loop's baseline
is Triton").

Contracts (T tokens, H hidden, I intermediate, nh / nkv heads, hd head dim):
  rms_norm(x[T,H] bf16, weight[H] bf16, eps) -> bf16[T,H]
      y = x / sqrt(mean(x^2) + eps) * weight, fp32 math
  silu_mul(gate_up[T,2I] bf16) -> bf16[T,I]
      silu(gate_up[:, :I]) * gate_up[:, I:], fp32 math
  rotary(q[T,nh,hd] bf16, k[T,nkv,hd] bf16, cos_sin[P,hd] fp32, positions[T] int64)
      -> (q', k') bf16, NeoX rotate-half: with c, s = cos_sin[pos, :hd/2], cos_sin[pos, hd/2:],
         out[:hd/2] = x1*c - x2*s, out[hd/2:] = x2*c + x1*s
  attention(q[B,nh,hd] bf16, k_cache[S,L,nkv,hd] bf16, v_cache[S,L,nkv,hd] bf16, slots[B] int64,
            seq_lens[B] int64) -> bf16[B,nh,hd]
      decode attention of one new token per sequence over positions [0, seq_lens[b]) of cache row
      slots[b]; query head h reads KV head h // (nh / nkv) (grouped-query attention); softmax of
      q.k / sqrt(hd), fp32 math
"""
import torch


def rms_norm(x, weight, eps=1e-6):
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return (y * weight.float()).to(x.dtype)


def silu_mul(gate_up):
    i = gate_up.shape[-1] // 2
    g = gate_up[..., :i].float()
    u = gate_up[..., i:].float()
    return (torch.nn.functional.silu(g) * u).to(gate_up.dtype)


def _rotate(x, c, s):
    half = x.shape[-1] // 2
    xf = x.float()
    x1, x2 = xf[..., :half], xf[..., half:]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)


def rotary(q, k, cos_sin, positions):
    half = q.shape[-1] // 2
    cs = cos_sin[positions]
    c = cs[:, None, :half]
    s = cs[:, None, half:]
    return _rotate(q, c, s), _rotate(k, c, s)


def attention(q, k_cache, v_cache, slots, seq_lens):
    b, nh, hd = q.shape
    g = nh // k_cache.shape[2]
    n = int(seq_lens.max())
    k = k_cache[slots, :n].float().repeat_interleave(g, dim=2)  # [B, n, nh, hd]
    v = v_cache[slots, :n].float().repeat_interleave(g, dim=2)
    s = torch.einsum("bhd,bnhd->bhn", q.float(), k) / (hd ** 0.5)
    valid = torch.arange(n, device=q.device)[None, :] < seq_lens[:, None]
    s = s.masked_fill(~valid[:, None, :], float("-inf"))
    return torch.einsum("bhn,bnhd->bhd", s.softmax(-1), v).to(q.dtype)


def rope_cache(max_pos, head_dim, theta, device=None):
    """cos_sin[P, hd] fp32: cos(pos * inv_freq) | sin(pos * inv_freq)."""
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    ang = torch.arange(max_pos, dtype=torch.float32)[:, None] * inv[None, :]
    return torch.cat([ang.cos(), ang.sin()], dim=-1).to(device)


OPS = {"rms_norm": rms_norm, "silu_mul": silu_mul, "rotary": rotary, "attention": attention}
