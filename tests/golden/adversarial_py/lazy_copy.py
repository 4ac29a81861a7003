"""Attack (issue 35, classes 1 and 2): the kernel returns an empty buffer at once and patches the
harness's module global that copies outputs to the host (`_host_copy`), computing the answer
there, after the harness's timer stopped. The copy now runs inside the supervisor's clock
around the sample, which sees the work the harness's timer left out."""
import os
import sys

import numpy as np

_pending = {}
_timing = sys.modules.get("magpie_bench.timing") if os.environ.get("MAGPIE_BENCH_MODE") == "timing" else None
if _timing is not None:
    _orig = _timing._host_copy

    def _lazy(t):
        job = _pending.pop(id(t), None)
        if job is not None:
            x, w = job
            ms = np.mean(np.square(x), axis=-1, keepdims=True)
            t[...] = x / np.sqrt(ms + 1e-6) * w
        return _orig(t)

    _timing._host_copy = _lazy


def kernel(x, w):
    out = np.empty_like(x)
    if _timing is not None:
        _pending.clear()
        _pending[id(out)] = (x, w)
    else:
        ms = np.mean(np.square(x), axis=-1, keepdims=True)
        out[...] = x / np.sqrt(ms + 1e-6) * w
    return out
