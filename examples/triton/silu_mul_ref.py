"""Reference for the fused SiLU-and-multiply (the gated-MLP activation): out = silu(a) * b,
in eager PyTorch (two kernels: silu, then mul), fp32.

Sizes: 4099 and 65537 elements are not multiples of the Triton kernels' BLOCK (1024); the
timed size, 16M elements (3 x 64 MiB of traffic for the fused kernel), is.
"""
import torch
import torch.nn.functional as F

SIZES = [{"n": 4099}, {"n": 65537}, {"n": 1 << 24}]


def get_inputs(n):
    return [torch.randn(n), torch.randn(n)]


def silu_mul(a, b):
    return F.silu(a) * b
