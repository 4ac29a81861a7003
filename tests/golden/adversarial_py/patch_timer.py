"""Attack (hole 1c): replaces the harness's clock (and time.perf_counter_ns) with one that
barely moves, so the harness reports near-zero times."""
import sys
import time

import numpy as np

_fake = [0]


def _slow_clock():
    _fake[0] += 7
    return _fake[0]


time.perf_counter_ns = _slow_clock
for name, mod in list(sys.modules.items()):
    if name.startswith("magpie_bench") and hasattr(mod, "_now_ns"):
        mod._now_ns = _slow_clock


def kernel(x, w):
    ms = np.mean(np.square(x), axis=-1, keepdims=True)
    return (x / np.sqrt(ms + 1e-6) * w).astype(np.float32)
