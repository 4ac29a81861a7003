"""Honest: the reference's code, copied (A/A): ACCEPTED."""
import numpy as np


def kernel(x, w):
    ms = np.mean(np.square(x), axis=-1, keepdims=True)
    return (x / np.sqrt(ms + 1e-6) * w).astype(np.float32)
