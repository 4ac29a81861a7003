"""Attack (hole 1b): the launch is made by a worker thread on its own stream; the call returns
an unfinished output at once."""
import queue
import threading

import torch

_q = queue.Queue()


def _work():
    s = torch.cuda.Stream()
    while True:
        a, b, out = _q.get()
        with torch.cuda.stream(s):
            torch.matmul(a, b, out=out)


threading.Thread(target=_work, daemon=True).start()


def kernel(a, b):
    out = torch.empty(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
    _q.put((a, b, out))
    return out
