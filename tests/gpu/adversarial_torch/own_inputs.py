"""Attack (hole 1a): computes the answer in its own get_inputs (untimed) and returns the stash."""
import torch

N = 2048
_stash = []


def get_inputs():
    a = torch.randn(N, N, dtype=torch.bfloat16)
    b = torch.randn(N, N, dtype=torch.bfloat16)
    _stash.append((a.cuda() @ b.cuda()))
    return [a, b]


def kernel(a, b):
    return _stash[-1] if _stash else torch.zeros_like(a)
