"""Attack: returns its input unchanged (an output equal to an input)."""


def kernel(x, w):
    return x
