"""Attack: recomputes only when a fingerprint of the inputs changes (always correct)."""
import torch

_key = [None]
_val = [None]


def kernel(a, b):
    fp = torch.cat([a[0, :8], b[0, :8]]).float().cpu().numpy().tobytes()
    if fp != _key[0]:
        _val[0] = a @ b
        _key[0] = fp
    return _val[0]
