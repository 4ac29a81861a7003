"""magpie_bench inputs for silu_mul at the GPU model's shapes: gate_up[T, 2*intermediate] bf16.
Sizes as bench_rms_norm.py (timed: the decode batch, MAGPIE_LOOP_TIMED_TOKENS)."""
import torch

from loop_shapes import GPU, timed_tokens

I = GPU["intermediate"]


def get_sizes():
    return [{"tokens": 1}, {"tokens": 7}, {"tokens": 333}, {"tokens": 2048}, {"tokens": timed_tokens()}]


def get_inputs(tokens):
    return [torch.randn(tokens, 2 * I).to(torch.bfloat16)]
