"""A/A problem (reduction): LayerNorm over the last dimension of a (2048, 8192) float32 tensor,
KernelBench style (Model, get_inputs, get_init_inputs)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.ln = nn.LayerNorm(hidden)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(2048, 8192)]


def get_init_inputs():
    return [8192]
