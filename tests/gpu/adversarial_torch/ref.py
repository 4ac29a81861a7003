"""Reference of the torch adversarial suite: a bfloat16 GEMM, 4096 x 4096 x 4096."""
import torch

N = 4096


def get_inputs():
    return [torch.randn(N, N, dtype=torch.bfloat16), torch.randn(N, N, dtype=torch.bfloat16)]


def matmul(a, b):
    return a @ b
