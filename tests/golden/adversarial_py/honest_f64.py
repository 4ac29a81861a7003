"""Honest: accumulates in float64, rounds to float32 at the end: ACCEPTED."""
import numpy as np


def kernel(x, w):
    x64 = x.astype(np.float64)
    inv = 1.0 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + 1e-6)
    return (x64 * inv * w).astype(np.float32)
