"""Honest: einsum (another cuBLAS path; bf16 rounding may differ within bf16 tolerance)."""
import torch


def kernel(a, b):
    return torch.einsum("ik,kj->ij", a, b)
