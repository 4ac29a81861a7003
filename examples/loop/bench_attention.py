"""magpie_bench inputs for the decode attention at the GPU model's shapes: q[B, heads, head_dim]
bf16, random bf16 K/V caches [B + 1, L, kv_heads, head_dim] (every row filled, so a kernel that
reads past a sequence's length reads live-looking data), the cache rows (a permutation) and the
lengths, random in [ctx/2, 3 ctx/2]. Sizes: small odd ones for the correctness gate, last and
timed the decode batch (MAGPIE_LOOP_TIMED_TOKENS) at the workload's mean context
(MAGPIE_LOOP_TIMED_CTX)."""
import torch

from loop_shapes import GPU, timed_context, timed_tokens


def get_sizes():
    return [{"batch": 1, "ctx": 5}, {"batch": 3, "ctx": 77}, {"batch": 7, "ctx": 333},
            {"batch": timed_tokens(), "ctx": timed_context()}]


def get_inputs(batch, ctx):
    length = 2 * ctx + 64
    lo, hi = max(1, ctx // 2), max(2, min(length - 1, (3 * ctx) // 2))
    q = torch.randn(batch, GPU["heads"], GPU["head_dim"]).to(torch.bfloat16)
    k = torch.randn(batch + 1, length, GPU["kv_heads"], GPU["head_dim"]).to(torch.bfloat16)
    v = torch.randn(batch + 1, length, GPU["kv_heads"], GPU["head_dim"]).to(torch.bfloat16)
    slots = torch.randperm(batch + 1)[:batch].to(torch.int64)
    lens = torch.randint(lo, hi + 1, (batch,), dtype=torch.int64)
    return [q, k, v, slots, lens]
