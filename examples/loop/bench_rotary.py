"""magpie_bench inputs for rotary at the GPU model's shapes: q[T, heads, head_dim] and
k[T, kv_heads, head_dim] bf16, the fp32 cos/sin cache and int64 positions (random in
[0, max_pos)). Sizes as bench_rms_norm.py (timed: the decode batch, MAGPIE_LOOP_TIMED_TOKENS)."""
import torch

from kernels_eager import rope_cache
from loop_shapes import GPU, timed_tokens


def get_sizes():
    return [{"tokens": 1}, {"tokens": 7}, {"tokens": 333}, {"tokens": 2048}, {"tokens": timed_tokens()}]


def get_inputs(tokens):
    q = torch.randn(tokens, GPU["heads"], GPU["head_dim"]).to(torch.bfloat16)
    k = torch.randn(tokens, GPU["kv_heads"], GPU["head_dim"]).to(torch.bfloat16)
    pos = torch.randint(0, GPU["max_pos"], (tokens,), dtype=torch.int64)
    return [q, k, rope_cache(GPU["max_pos"], GPU["head_dim"], GPU["rope_theta"]), pos]
