"""RMSNorm processed in blocks of 16 rows (sum of squares by einsum), tail block included.

Correct: matches rmsnorm_ref.py within fp32 tolerance at every size."""
import numpy as np

EPS = 1e-6
BLOCK_ROWS = 16


def rmsnorm_blocked(x, w):
    rows, hidden = x.shape
    out = np.empty_like(x)
    for start in range(0, rows, BLOCK_ROWS):
        blk = x[start:start + BLOCK_ROWS]
        inv = 1.0 / np.sqrt(np.einsum("ij,ij->i", blk, blk) / hidden + EPS)
        out[start:start + BLOCK_ROWS] = blk * inv[:, None] * w
    return out
