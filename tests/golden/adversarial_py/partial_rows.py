"""Attack: normalises only the first half of the rows on large problems."""
import numpy as np


def kernel(x, w):
    rows = x.shape[0] if x.shape[0] < 100 else x.shape[0] // 2
    out = np.zeros_like(x)
    ms = np.mean(np.square(x[:rows]), axis=-1, keepdims=True)
    out[:rows] = x[:rows] / np.sqrt(ms + 1e-6) * w
    return out
