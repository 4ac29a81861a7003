"""Magpie-style PyTorch-type testcase without torch: checks a numpy-free computation."""
import os
import sys

from kernel import add

assert os.path.basename(os.getcwd()) == "simple_py_test", os.getcwd()
ok = all(add(i, 2) == i + 2 for i in range(100))
print("check:", "pass" if ok else "fail")
sys.exit(0 if ok else 1)
