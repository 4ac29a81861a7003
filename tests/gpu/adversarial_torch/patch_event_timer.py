"""Attack (hole 1c): makes every CUDA event report 1 us. (The timer of record is CUPTI.)"""
import torch

torch.cuda.Event.elapsed_time = lambda self, other: 0.001


def kernel(a, b):
    return a @ b
