"""Honest: the GEMM on a side stream, joined back to the current stream."""
import torch

_side = []


def kernel(a, b):
    if not _side:
        _side.append(torch.cuda.Stream())
    s = _side[0]
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        out = a @ b
    torch.cuda.current_stream().wait_stream(s)
    out.record_stream(torch.cuda.current_stream())
    return out
