import torch
import torch.nn as nn

class ModelNew(nn.Module):
    """
    Subtly wrong candidate: the maths is right (addmm + ReLU), but the bias is created before
    the nn.Linear, so the seeded RNG hands out different numbers and the weights no longer
    match Model's. KernelBench-style evaluation (same seed for both constructors) rejects it.
    """
    def __init__(self, in_features, out_features, bias_shape):
        super(ModelNew, self).__init__()
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.gemm = nn.Linear(in_features, out_features, bias=False)

    def forward(self, x):
        return torch.addmm(self.bias, x, self.gemm.weight.t()).relu_()
