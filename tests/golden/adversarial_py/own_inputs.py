"""Attack (hole 1a): the work happens in this module's own get_inputs (untimed); the entry
returns what it stashed. magpie must take the inputs from the reference instead."""
import numpy as np

_stash = []


def get_sizes():
    return [{"rows": 7, "hidden": 384}, {"rows": 37, "hidden": 1024}, {"rows": 512, "hidden": 1024}]


def get_inputs(rows, hidden):
    x = np.random.standard_normal((rows, hidden)).astype(np.float32)
    w = (1.0 + 0.1 * np.random.standard_normal(hidden)).astype(np.float32)
    ms = np.mean(np.square(x), axis=-1, keepdims=True)
    _stash.append((x / np.sqrt(ms + 1e-6) * w).astype(np.float32))
    return [x, w]


def kernel(x, w):
    return _stash[-1] if _stash else np.zeros_like(x)
