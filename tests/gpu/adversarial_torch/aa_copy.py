"""Honest: the reference's code (A/A)."""


def kernel(a, b):
    return a @ b
