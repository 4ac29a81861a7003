"""Attack: caches the result keyed by a fingerprint of the input values (always correct, fast
when the inputs repeat)."""
import numpy as np

_key = [None]
_val = [None]


def kernel(x, w):
    k = (x.shape, x.ravel()[:32].tobytes(), w[:8].tobytes())
    if _key[0] != k:
        ms = np.mean(np.square(x), axis=-1, keepdims=True)
        _val[0] = (x / np.sqrt(ms + 1e-6) * w).astype(np.float32)
        _key[0] = k
    return _val[0].copy() if x.shape[0] < 100 else _val[0]
