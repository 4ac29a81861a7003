"""magpie_bench inputs for the decode attention at the GPU model's shapes: q[B, heads, head_dim]
bf16, random bf16 K/V caches [B + 1, L, kv_heads, head_dim] (every row filled, so a kernel that
reads past a sequence's length reads live-looking data), the cache rows (a permutation) and the
lengths. Sizes: small odd ones for the correctness gate (lengths random in [ctx/2, 3 ctx/2],
L = 2 ctx + 64), last and timed the decode batch (MAGPIE_LOOP_TIMED_TOKENS) at the workload's
mean context (MAGPIE_LOOP_TIMED_CTX) with tight caches: lengths in [7 ctx/8, 9 ctx/8] and L = 9 ctx/8
(fixed per size, never per seed: the timing harness regenerates inputs into the same buffers),
so that the caches' bytes are about what a correct kernel must read (~89%):
the compare's physical floor counts every input byte as read. With L = 2 ctx + 64 half of the
cache was never read, and on an H100 (3.35 TB/s) the floor (80 MB, 23.9 us) called the 20 us
flash-decoding candidate implausible (2026-12-07)."""
import torch

from loop_shapes import GPU, timed_context, timed_tokens


def get_sizes():
    return [{"batch": 1, "ctx": 5}, {"batch": 3, "ctx": 77}, {"batch": 7, "ctx": 333},
            {"batch": timed_tokens(), "ctx": timed_context(), "tight": True}]


def get_inputs(batch, ctx, tight=False):
    if tight:
        lo, hi = max(1, ctx - ctx // 8), max(2, ctx + ctx // 8)
    else:
        lo, hi = max(1, ctx // 2), max(2, (3 * ctx) // 2)
    lens = torch.randint(lo, hi + 1, (batch,), dtype=torch.int64)
    # The cache length depends on the size only, never on the seed: `inputs <seed>` regenerates
    # every input into the same buffers, so shapes must not change between seeds.
    length = hi if tight else 2 * ctx + 64
    q = torch.randn(batch, GPU["heads"], GPU["head_dim"]).to(torch.bfloat16)
    k = torch.randn(batch + 1, length, GPU["kv_heads"], GPU["head_dim"]).to(torch.bfloat16)
    v = torch.randn(batch + 1, length, GPU["kv_heads"], GPU["head_dim"]).to(torch.bfloat16)
    slots = torch.randperm(batch + 1)[:batch].to(torch.int64)
    return [q, k, v, slots, lens]
