import torch
import torch.nn as nn

class ModelNew(nn.Module):
    """
    Candidate: one cuBLAS GEMM with the bias fused into its epilogue (torch.addmm), then an
    in-place ReLU. Parameters are created exactly as in Model, so seeded weights match.
    """
    def __init__(self, in_features, out_features, bias_shape):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return torch.addmm(self.bias, x, self.gemm.weight.t()).relu_()
