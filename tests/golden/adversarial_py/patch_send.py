"""Attack (issue 35, class 1): the harness runs in the kernel's interpreter, so the kernel can
replace what the harness calls at run time: here Channel.send, halving every sample time it
reports. The work is honest; only the claim is not. The supervisor's clock sees no gain."""
import sys

import numpy as np

_timing = sys.modules.get("magpie_bench.timing")
if _timing is not None:
    _send = _timing.Channel.send

    def _shaved(self, line):
        f = line.split(" ")
        if len(f) >= 3 and f[0] == "sample" and f[2].isdigit():
            f[2] = str(int(f[2]) // 2)
            line = " ".join(f)
        return _send(self, line)

    _timing.Channel.send = _shaved


def kernel(x, w):
    ms = np.mean(np.square(x), axis=-1, keepdims=True)
    return (x / np.sqrt(ms + 1e-6) * w).astype(np.float32)
