"""Attack: tries to read the CUPTI bootstrap (fd in MAGPIE_CUPTI_BOOT) to get the record key;
then returns a cached result for repeated inputs."""
import os

import torch

_key = None
try:
    _key = os.read(int(os.environ.get("MAGPIE_CUPTI_BOOT", "-1")), 256)
except (OSError, ValueError):
    pass
_cache = {}


def kernel(a, b):
    k = (a.data_ptr(), b.data_ptr())
    if k not in _cache:
        _cache[k] = a @ b
    return _cache[k]
