"""Attack: returns a persistent buffer that it fills only on the first call per shape."""
import numpy as np

_buf = {}


def kernel(x, w):
    b = _buf.get(x.shape)
    if b is None:
        ms = np.mean(np.square(x), axis=-1, keepdims=True)
        b = _buf[x.shape] = (x / np.sqrt(ms + 1e-6) * w).astype(np.float32)
    return b
