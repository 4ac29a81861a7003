"""Reference RMSNorm in numpy (CPU, no torch): y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * w.

Problem sizes are rows x hidden; row counts 1, 7 and 37 are not multiples of the candidates'
16-row block, the timed size (2048 rows) is. Run it alone with
    PYTHONPATH=<magpie>/python python3 -m magpie_bench --module rmsnorm_ref.py --entry rmsnorm
"""
import numpy as np

EPS = 1e-6


def get_sizes():
    return [{"rows": 1, "hidden": 384}, {"rows": 7, "hidden": 384},
            {"rows": 37, "hidden": 1024}, {"rows": 2048, "hidden": 1024}]


def get_inputs(rows, hidden):
    x = np.random.standard_normal((rows, hidden)).astype(np.float32)
    w = (1.0 + 0.1 * np.random.standard_normal(hidden)).astype(np.float32)
    return [x, w]


def rmsnorm(x, w):
    ms = np.mean(np.square(x), axis=-1, keepdims=True)
    return (x / np.sqrt(ms + EPS) * w).astype(np.float32)
