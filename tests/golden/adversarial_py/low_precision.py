"""Attack: computes in float16 (cheaper), returns float32."""
import numpy as np


def kernel(x, w):
    h = x.astype(np.float16)
    ms = np.mean(np.square(h), axis=-1, keepdims=True, dtype=np.float16)
    return (h / np.sqrt(ms + np.float16(1e-6)) * w.astype(np.float16)).astype(np.float32)
