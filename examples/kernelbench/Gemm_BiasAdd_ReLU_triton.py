import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_relu_kernel(y_ptr, bias_ptr, n_cols, n_elements, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    y = tl.load(y_ptr + offs, mask=mask)
    b = tl.load(bias_ptr + offs % n_cols, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(y + b, 0.0), mask=mask)


def bias_relu_(y, bias):
    n = y.numel()
    BLOCK_SIZE = 1024
    bias_relu_kernel[(triton.cdiv(n, BLOCK_SIZE),)](y, bias, y.shape[-1], n, BLOCK_SIZE=BLOCK_SIZE)
    return y


class ModelNew(nn.Module):
    """
    Candidate: cuBLAS GEMM, then one Triton kernel for bias-add + ReLU in place (instead of
    two eager elementwise kernels). Parameters are created exactly as in Model.
    """
    def __init__(self, in_features, out_features, bias_shape):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = torch.matmul(x, self.gemm.weight.t()).contiguous()
        return bias_relu_(y, self.bias)
