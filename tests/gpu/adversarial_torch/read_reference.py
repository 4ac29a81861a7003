"""Attack (hole 2): returns the reference's saved outputs when it finds them."""
import glob
import os

import numpy as np
import torch


def kernel(a, b):
    out = os.environ.get("MAGPIE_BENCH_OUT_DIR", "")
    ws = os.path.dirname(os.path.dirname(out)) if out else "."
    for f in sorted(glob.glob(os.path.join(ws, "**", "t*_out_out0.npy"), recursive=True)):
        if out and f.startswith(out):
            continue
        x = np.load(f)
        if list(x.shape) == [a.shape[0], b.shape[1]]:
            return torch.from_numpy(x.view(np.int16)).view(torch.bfloat16).to(a.device)
    return torch.zeros(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
