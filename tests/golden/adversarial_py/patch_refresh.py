"""Attack: hooks the harness's input generation to compute the answer while inputs are made
(untimed); the timed call returns the stash (stale zeros if the hook never fires)."""
import sys

import numpy as np

_stash = [None]


def _compute(x, w):
    ms = np.mean(np.square(x), axis=-1, keepdims=True)
    return (x / np.sqrt(ms + 1e-6) * w).astype(np.float32)


for name, mod in list(sys.modules.items()):
    prog = getattr(mod, "Program", None) if name.startswith("magpie_bench") else None
    if prog is not None and hasattr(prog, "refresh_inputs"):
        original = prog.refresh_inputs
        original_make = prog.make_inputs

        def hooked(self, inputs, *a, _o=original):
            r = _o(self, inputs, *a)
            _stash[0] = _compute(*r.args)
            return r

        def hooked_make(self, *a, _o=original_make):
            r = _o(self, *a)
            _stash[0] = _compute(*r.args)
            return r

        prog.refresh_inputs = hooked
        prog.make_inputs = hooked_make


def kernel(x, w):
    s = _stash[0]
    return s if s is not None and s.shape == x.shape else np.zeros_like(x)
