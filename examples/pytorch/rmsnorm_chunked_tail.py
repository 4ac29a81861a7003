"""RMSNorm in chunks of 256 rows (to bound the fp32 temporaries) that forgets the tail chunk.

Subtly wrong: exact whenever rows is a multiple of 256 (the timed size, 8192 rows), but the
last rows % 256 rows are never written for other sizes (torch.empty_like leaves garbage)."""
import torch
import torch.nn as nn

CHUNK_ROWS = 256


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter((1.0 + 0.1 * torch.randn(hidden)).to(torch.bfloat16))

    def forward(self, x):
        out = torch.empty_like(x)
        w = self.weight.float()
        for c in range(x.shape[0] // CHUNK_ROWS):  # BUG: no tail chunk for rows % 256 != 0
            xf = x[c * CHUNK_ROWS:(c + 1) * CHUNK_ROWS].float()
            y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
            out[c * CHUNK_ROWS:(c + 1) * CHUNK_ROWS] = (y * w).to(x.dtype)
        return out
