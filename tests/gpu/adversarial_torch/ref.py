"""Reference of the torch adversarial suite: a bfloat16 GEMM, 2048 x 2048 x 2048 (~17 GFLOP, ~25 us on an H200)."""
import torch

N = 2048


def get_inputs():
    return [torch.randn(N, N, dtype=torch.bfloat16), torch.randn(N, N, dtype=torch.bfloat16)]


def matmul(a, b):
    return a @ b
