"""Honest: two K halves accumulated in float32, rounded to bfloat16 once (slower, within bf16
tolerance)."""


def kernel(a, b):
    k = a.shape[1] // 2
    acc = a[:, :k].float() @ b[:k].float()
    acc += a[:, k:].float() @ b[k:].float()
    return acc.to(a.dtype)
