"""Honest: the sum of squares accumulated in reversed blocks of 256 columns (another rounding
order, within float32 tolerance): ACCEPTED."""
import numpy as np


def kernel(x, w):
    ss = np.zeros((x.shape[0], 1), dtype=np.float32)
    for j in range(x.shape[1] - 1, -1, -256):
        lo = max(j - 255, 0)
        ss[:, 0] += np.sum(np.square(x[:, lo:j + 1]), axis=-1)
    return (x / np.sqrt(ss / x.shape[1] + 1e-6) * w).astype(np.float32)
