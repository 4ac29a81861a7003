"""Shapes of the optimization-loop example model, shared by the server (model.py,
model_numpy.py) and the kernel harness modules (bench_*.py), so `magpie compare` times the
kernels at the shapes the model really runs.

GPU model (backend torch): a Llama-style decoder, bf16, random weights (seed 0), 32 layers: deep
enough that, with decode steps replayed as CUDA graphs, a step's time is the GPU's.
CPU model (backend numpy): the same architecture, tiny, float32 — for the CI dry run only.
"""
import os

GPU = dict(vocab=16384, hidden=1024, intermediate=2816, layers=32, heads=16, kv_heads=4,
           head_dim=64, max_pos=4096, eps=1e-6, rope_theta=10000.0)
CPU = dict(vocab=512, hidden=128, intermediate=352, layers=2, heads=4, kv_heads=2,
           head_dim=32, max_pos=1024, eps=1e-6, rope_theta=10000.0)


def model_config(backend):
    return dict(GPU if backend == "torch" else CPU)


def timed_context(default=1152):
    """Mean cache positions per sequence at the timed size of the attention harness: the
    benchmark's mean prompt plus half its mean output (MAGPIE_LOOP_TIMED_CTX)."""
    try:
        v = int(os.environ.get("MAGPIE_LOOP_TIMED_CTX", default))
    except ValueError:
        v = default
    return max(1, v)


def timed_tokens(default=32):
    """Token rows of the timed size in the harness modules: the decode batch of the benchmark
    (MAGPIE_LOOP_TIMED_TOKENS, set by the compare step of examples/loop/optimize*.yaml to the
    benchmark's concurrency)."""
    try:
        v = int(os.environ.get("MAGPIE_LOOP_TIMED_TOKENS", default))
    except ValueError:
        v = default
    return max(1, v)
