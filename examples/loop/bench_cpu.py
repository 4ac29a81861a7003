"""magpie_bench inputs for the numpy (CPU) versions of the ops at loop_shapes.CPU, one
get_inputs per op (compare_*_cpu.yaml pick theirs with get_inputs_func). Sizes: 1, 7 and 33
tokens, then the timed decode batch (MAGPIE_LOOP_TIMED_TOKENS, default 32)."""
import numpy as np

from kernels_numpy import rope_cache
from loop_shapes import CPU, timed_tokens


def get_sizes():
    return [{"tokens": 1}, {"tokens": 7}, {"tokens": 33}, {"tokens": timed_tokens()}]


def _randn(*shape):
    return np.random.standard_normal(shape).astype(np.float32)


def rms_norm_inputs(tokens):
    return [_randn(tokens, CPU["hidden"]), (1.0 + 0.1 * _randn(CPU["hidden"])).astype(np.float32)]


def silu_mul_inputs(tokens):
    return [_randn(tokens, 2 * CPU["intermediate"])]


def rotary_inputs(tokens):
    pos = np.random.randint(0, CPU["max_pos"], size=tokens).astype(np.int64)
    return [_randn(tokens, CPU["heads"], CPU["head_dim"]), _randn(tokens, CPU["kv_heads"], CPU["head_dim"]),
            rope_cache(CPU["max_pos"], CPU["head_dim"], CPU["rope_theta"]), pos]


def attention_inputs(tokens):
    """Decode attention with `tokens` sequences; contexts around the CPU benchmark's mean (ISL 32 +
    OSL/2 = 40), every cache row filled so reading past a length reads live-looking data."""
    ctx, length = 40, 96
    q = _randn(tokens, CPU["heads"], CPU["head_dim"])
    k = _randn(tokens + 1, length, CPU["kv_heads"], CPU["head_dim"])
    v = _randn(tokens + 1, length, CPU["kv_heads"], CPU["head_dim"])
    slots = np.random.permutation(tokens + 1)[:tokens].astype(np.int64)
    lens = np.random.randint(ctx // 2, (3 * ctx) // 2 + 1, size=tokens).astype(np.int64)
    return [q, k, v, slots, lens]
