"""A model whose weights are drawn at construction (numpy, CPU), KernelBench style: the timing
processes must build it with the same MAGPIE_BENCH_INIT_SEED as the correctness runs, or the
outputs of checked timed samples differ from the reference's (seen on an H200, 2026-12-03)."""
import numpy as np


class Model:
    def __init__(self, hidden):
        self.w = (np.random.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32)

    def forward(self, x):
        return (x @ self.w).astype(np.float32)


def get_inputs():
    return [np.random.standard_normal((64, 256)).astype(np.float32)]


def get_init_inputs():
    return [256]
