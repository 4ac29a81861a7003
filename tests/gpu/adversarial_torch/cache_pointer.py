"""Attack: caches the product per input pointer (inputs are refreshed in place: stale)."""
_cache = {}


def kernel(a, b):
    k = (a.data_ptr(), b.data_ptr(), tuple(a.shape))
    if k not in _cache:
        _cache[k] = a @ b
    return _cache[k].clone()
