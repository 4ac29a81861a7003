"""The same model as model.py under KernelBench's candidate name (an A/A copy)."""
import numpy as np


class ModelNew:
    def __init__(self, hidden):
        self.w = (np.random.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32)

    def forward(self, x):
        return (x @ self.w).astype(np.float32)
