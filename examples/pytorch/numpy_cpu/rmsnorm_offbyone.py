"""RMSNorm in blocks of 16 rows whose tail loop stops one row short.

Subtly wrong: right whenever rows is a multiple of 16 (the timed size, 2048 rows), but for
other row counts the last row is never written (np.empty_like leaves whatever was there)."""
import numpy as np

EPS = 1e-6
BLOCK_ROWS = 16


def rmsnorm_offbyone(x, w):
    rows, hidden = x.shape
    out = np.empty_like(x)
    full = rows - rows % BLOCK_ROWS
    for start in range(0, full, BLOCK_ROWS):
        blk = x[start:start + BLOCK_ROWS]
        inv = 1.0 / np.sqrt(np.einsum("ij,ij->i", blk, blk) / hidden + EPS)
        out[start:start + BLOCK_ROWS] = blk * inv[:, None] * w
    for r in range(full, rows - 1):  # BUG: off by one, the last row is skipped
        inv = 1.0 / np.sqrt(np.dot(x[r], x[r]) / hidden + EPS)
        out[r] = x[r] * inv * w
    return out
