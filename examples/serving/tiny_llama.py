"""A small Llama-style decoder in plain PyTorch with random weights and a slot-based KV cache,
for the example server (no transformers, no weights, no network). Default shape: 4 layers,
hidden 1024, 16 heads (4 KV heads), SwiGLU 2816, vocab 32000; bf16 on CUDA, fp32 on CPU."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class Config:
    def __init__(self, vocab=32000, hidden=1024, layers=4, heads=16, kv_heads=4, intermediate=2816, max_len=4096,
                 max_batch=64, rope_theta=10000.0):
        self.vocab, self.hidden, self.layers, self.heads, self.kv_heads = vocab, hidden, layers, heads, kv_heads
        self.intermediate, self.max_len, self.max_batch, self.rope_theta = intermediate, max_len, max_batch, rope_theta
        self.head_dim = hidden // heads


class RMSNorm(nn.Module):
    def __init__(self, n, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        v = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(v + self.eps)).to(x.dtype) * self.weight


def rope(x, cos, sin):
    """x: (..., T, d) with cos/sin broadcastable (..., T, d/2); rotate-half convention."""
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def attention(q, k, v, mask):
    """q (B,H,Tq,d), k/v (B,H,Tk,d), additive mask broadcastable to (B,H,Tq,Tk)."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1]) + mask
    return torch.softmax(s.float(), dim=-1).to(q.dtype) @ v


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        d = c.head_dim
        self.attn_norm, self.mlp_norm = RMSNorm(c.hidden), RMSNorm(c.hidden)
        self.wq = nn.Linear(c.hidden, c.heads * d, bias=False)
        self.wk = nn.Linear(c.hidden, c.kv_heads * d, bias=False)
        self.wv = nn.Linear(c.hidden, c.kv_heads * d, bias=False)
        self.wo = nn.Linear(c.heads * d, c.hidden, bias=False)
        self.w1 = nn.Linear(c.hidden, c.intermediate, bias=False)
        self.w3 = nn.Linear(c.hidden, c.intermediate, bias=False)
        self.w2 = nn.Linear(c.intermediate, c.hidden, bias=False)

    def forward(self, x, cos, sin, cache_k, cache_v, slots, positions, prefill_len):
        c, (b, t, _) = self.c, x.shape
        h = self.attn_norm(x)
        q = self.wq(h).view(b, t, c.heads, c.head_dim).transpose(1, 2)
        k = self.wk(h).view(b, t, c.kv_heads, c.head_dim).transpose(1, 2)
        v = self.wv(h).view(b, t, c.kv_heads, c.head_dim).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        if prefill_len:  # one sequence, positions 0..T-1
            cache_k[slots[0], :, :t] = k[0]
            cache_v[slots[0], :, :t] = v[0]
            keys, vals = k, v
            mask = torch.full((t, t), float("-inf"), device=x.device, dtype=q.dtype).triu(1)
        else:  # B sequences, one new token each at positions[b]
            cache_k[slots, :, positions] = k[:, :, 0]
            cache_v[slots, :, positions] = v[:, :, 0]
            n = int(positions.max().item()) + 1
            keys, vals = cache_k[slots, :, :n], cache_v[slots, :, :n]
            idx = torch.arange(n, device=x.device)
            mask = torch.zeros(b, 1, 1, n, device=x.device, dtype=q.dtype)
            mask.masked_fill_(idx.view(1, 1, 1, n) > positions.view(b, 1, 1, 1), float("-inf"))
        rep = c.heads // c.kv_heads
        keys, vals = keys.repeat_interleave(rep, dim=1), vals.repeat_interleave(rep, dim=1)
        a = attention(q, keys, vals, mask).transpose(1, 2).reshape(b, t, c.heads * c.head_dim)
        x = x + self.wo(a)
        h = self.mlp_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class TinyLlama(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c.vocab, c.hidden)
        self.layers = nn.ModuleList(Block(c) for _ in range(c.layers))
        self.norm = RMSNorm(c.hidden)
        self.lm_head = nn.Linear(c.hidden, c.vocab, bias=False)
        inv = 1.0 / (c.rope_theta ** (torch.arange(0, c.head_dim, 2).float() / c.head_dim))
        f = torch.outer(torch.arange(c.max_len).float(), inv)
        self.register_buffer("cos", f.cos(), persistent=False)
        self.register_buffer("sin", f.sin(), persistent=False)

    def allocate_cache(self, dtype, device):
        c = self.c
        shape = (c.max_batch, c.kv_heads, c.max_len, c.head_dim)
        self.cache_k = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(c.layers)]
        self.cache_v = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(c.layers)]

    def step(self, ids, slots, positions, prefill_len):
        """ids (B,T) → greedy next token per sequence (B,)."""
        x = self.embed(ids)
        if prefill_len:
            cos, sin = self.cos[:prefill_len].to(x.dtype), self.sin[:prefill_len].to(x.dtype)
        else:
            cos, sin = self.cos[positions].to(x.dtype)[:, None, None, :], self.sin[positions].to(x.dtype)[:, None, None, :]
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, self.cache_k[i], self.cache_v[i], slots, positions, prefill_len)
        logits = self.lm_head(self.norm(x[:, -1]))
        return logits.argmax(-1)


class TorchBackend:
    """Engine backend on TinyLlama (see engine.py)."""

    def __init__(self, config, device=None, seed=0):
        torch.manual_seed(seed)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
        self.model = TinyLlama(config).to(device=self.device, dtype=self.dtype).eval()
        self.model.cos, self.model.sin = self.model.cos.float(), self.model.sin.float()
        self.model.allocate_cache(self.dtype, self.device)
        self.vocab = config.vocab

    @torch.inference_mode()
    def prefill(self, slot, ids):
        t = torch.tensor([ids], device=self.device) % self.vocab
        s = torch.tensor([slot], device=self.device)
        return int(self.model.step(t, s, None, len(ids))[0].item())

    @torch.inference_mode()
    def decode(self, slots, tokens, positions):
        t = torch.tensor(tokens, device=self.device).view(-1, 1)
        s = torch.tensor(slots, device=self.device)
        p = torch.tensor(positions, device=self.device)
        return self.model.step(t, s, p, 0).tolist()
