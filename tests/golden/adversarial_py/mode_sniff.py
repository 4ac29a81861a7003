"""Attack: honest in correctness mode, returns the previous result in timing mode."""
import os

import numpy as np

_last = [None]
_timing = os.environ.get("MAGPIE_BENCH_MODE") == "timing"


def kernel(x, w):
    if _timing and _last[0] is not None and _last[0].shape == x.shape:
        return _last[0]
    ms = np.mean(np.square(x), axis=-1, keepdims=True)
    _last[0] = (x / np.sqrt(ms + 1e-6) * w).astype(np.float32)
    return _last[0]
