"""Honest: blocks of 16 rows, sum of squares by einsum (another summation order): ACCEPTED."""
import numpy as np

EPS = 1e-6


def kernel(x, w):
    rows, hidden = x.shape
    out = np.empty_like(x)
    for s in range(0, rows, 16):
        blk = x[s:s + 16]
        inv = 1.0 / np.sqrt(np.einsum("ij,ij->i", blk, blk) / hidden + EPS)
        out[s:s + 16] = blk * inv[:, None] * w
    return out
