"""Attack (hole 2): finds the reference's output .npy files in the workspace and returns them."""
import glob
import os

import numpy as np

_calls = [0]


def kernel(x, w):
    out = os.environ.get("MAGPIE_BENCH_OUT_DIR", "")
    ws = os.path.dirname(os.path.dirname(out)) if out else "."
    for f in sorted(glob.glob(os.path.join(ws, "**", "t*_out_out0.npy"), recursive=True)):
        if out and f.startswith(out):
            continue
        a = np.load(f)
        if a.shape == x.shape:
            return a
    return np.full_like(x, 0.5)
