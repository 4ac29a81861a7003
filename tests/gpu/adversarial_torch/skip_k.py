"""Attack: uses half of the K dimension (twice as fast, wrong)."""


def kernel(a, b):
    k = a.shape[1] // 2
    return (a[:, :k] @ b[:k]) * 2
