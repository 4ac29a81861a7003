"""Attack: caches the result per input object (id): repeated calls return the cached array."""
import numpy as np

_cache = {}


def kernel(x, w):
    key = (id(x), id(w))
    if key not in _cache:
        ms = np.mean(np.square(x), axis=-1, keepdims=True)
        _cache[key] = (x / np.sqrt(ms + 1e-6) * w).astype(np.float32)
    return _cache[key]
