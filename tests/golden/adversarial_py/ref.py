"""Reference of the python adversarial suite: RMSNorm in numpy, y = x / sqrt(mean(x^2) + eps) * w."""
import numpy as np

EPS = 1e-6


def get_sizes():
    return [{"rows": 7, "hidden": 384}, {"rows": 37, "hidden": 1024}, {"rows": 512, "hidden": 1024}]


def get_inputs(rows, hidden):
    x = np.random.standard_normal((rows, hidden)).astype(np.float32)
    w = (1.0 + 0.1 * np.random.standard_normal(hidden)).astype(np.float32)
    return [x, w]


def rmsnorm(x, w):
    ms = np.mean(np.square(x), axis=-1, keepdims=True)
    return (x / np.sqrt(ms + EPS) * w).astype(np.float32)
