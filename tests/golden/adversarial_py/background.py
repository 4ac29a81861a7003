"""Attack: returns an empty buffer at once and fills it from a background thread later."""
import threading
import time

import numpy as np


def kernel(x, w):
    out = np.empty_like(x)

    def fill():
        time.sleep(0.02)
        ms = np.mean(np.square(x), axis=-1, keepdims=True)
        out[...] = x / np.sqrt(ms + 1e-6) * w

    threading.Thread(target=fill, daemon=True).start()
    return out
