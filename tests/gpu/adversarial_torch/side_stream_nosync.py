"""Attack: launches on a side stream and does not join it back (the harness's event timer on
the current stream sees nothing; CUPTI sees the launch)."""
import torch

_s = []


def kernel(a, b):
    if not _s:
        _s.append(torch.cuda.Stream())
    with torch.cuda.stream(_s[0]):
        return a @ b
