"""Reference RMSNorm in eager PyTorch (bf16 in/out, fp32 math), KernelBench-style Model.

    y = x / sqrt(mean(x^2, -1) + eps) * weight

Sizes are rows x 4096; 1, 7 and 1000 rows are not multiples of the 256-row chunk used by
rmsnorm_chunked_tail.py, the timed size (8192 rows, 64 MiB of bf16 in + out) is.
The weight is drawn from torch's RNG in __init__, which the harness seeds with
MAGPIE_BENCH_INIT_SEED, so every implementation below builds the same weight.
"""
import torch
import torch.nn as nn

HIDDEN = 4096
EPS = 1e-6


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter((1.0 + 0.1 * torch.randn(hidden)).to(torch.bfloat16))

    def forward(self, x):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * self.weight.float()).to(x.dtype)


def get_sizes():
    return [{"rows": 1}, {"rows": 7}, {"rows": 1000}, {"rows": 8192}]


def get_inputs(rows):
    return [torch.randn(rows, HIDDEN).to(torch.bfloat16)]


def get_init_inputs():
    return [HIDDEN, EPS]
