"""Attack: returns a persistent buffer filled on the first call only."""
import torch

_buf = {}


def kernel(a, b):
    k = tuple(a.shape)
    if k not in _buf:
        _buf[k] = a @ b
    return _buf[k]
