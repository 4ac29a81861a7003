"""The python examples are what they claim, run through the harness on the CPU:
- examples/pytorch/numpy_cpu: the blocked variant matches the reference at every size, the
  off-by-one one fails at the non-multiple sizes and matches at the timed size;
- with torch importable (CPU is enough): the same for examples/pytorch (rmsnorm) and the
  KernelBench-format problem in examples/kernelbench (unchanged problem file as reference,
  ModelNew candidates with --inputs-from it); Triton examples need a GPU (tests/gpu/).
- every example .py compiles.
Run: python3 check_examples.py (PYTHONPATH with <magpie>/python and this directory)."""
import glob
import importlib.util
import os
import py_compile
import sys
import tempfile
import unittest

from example_check import Impl, compare_runs, correctness, timing

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
EX = os.path.join(SRC, "examples")
HAVE_TORCH = importlib.util.find_spec("torch") is not None


def ex(*parts):
    return os.path.join(EX, *parts)


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def run_pair(self, ref, cand, seeds, extra=None):
        """Reference (run once per seeds/extra) and candidate → compare_runs rows."""
        rd, cd = os.path.join(self.tmp.name, ref.name), os.path.join(self.tmp.name, cand.name)
        key = (ref.name, tuple(seeds), tuple(sorted((extra or {}).items())))
        if getattr(self, "_ref_key", None) != key:
            rc, self._ref_manifest, err = correctness(ref, seeds, rd, extra)
            self.assertEqual(rc, 0, err)
            self._ref_key = key
        rm = self._ref_manifest
        rc, cm, err = correctness(cand, seeds, cd, extra)
        self.assertEqual(rc, 0, err)
        return compare_runs(rd, rm, cd, cm), cm

    def check_variants(self, ref, good, wrong, seeds, timed, extra=None):
        """good matches everywhere; wrong fails except at size index `timed`."""
        if good is not None:
            rows, _ = self.run_pair(ref, good, seeds, extra)
            self.assertTrue(all(r["ok"] for r in rows), rows)
        rows, _ = self.run_pair(ref, wrong, seeds, extra)
        self.assertEqual([r["ok"] for r in rows], [r["size_index"] == timed for r in rows], rows)



class NumpyExamples(Base):
    """Fast, numpy only (CI)."""

    def test_numpy_cpu_examples(self):
        d = ex("pytorch", "numpy_cpu")
        ref = Impl("ref", os.path.join(d, "rmsnorm_ref.py"), "rmsnorm")
        good = Impl("blocked", os.path.join(d, "rmsnorm_blocked.py"), "rmsnorm_blocked",
                    os.path.join(d, "rmsnorm_ref.py"))
        wrong = Impl("offbyone", os.path.join(d, "rmsnorm_offbyone.py"), "rmsnorm_offbyone",
                     os.path.join(d, "rmsnorm_ref.py"))
        self.check_variants(ref, good, wrong, [3, 4, 5, 6, 7], timed=3)
        ready, ns, error, rc = timing(good, warmup=2, samples=3,
                                      extra={"MAGPIE_BENCH_COLD": "1"})
        self.assertEqual((rc, error), (0, None))
        self.assertEqual((ready["timer"], ready["size"]), ("host_clock", "rows=2048,hidden=1024"))
        self.assertEqual(len(ns), 3)

    def test_examples_compile(self):
        files = glob.glob(ex("pytorch", "**", "*.py"), recursive=True) + \
            glob.glob(ex("triton", "*.py")) + glob.glob(ex("kernelbench", "*.py"))
        self.assertGreaterEqual(len(files), 12)
        for f in files:
            py_compile.compile(f, cfile=os.path.join(self.tmp.name, "x.pyc"), doraise=True)
        for d in ("pytorch", "pytorch/numpy_cpu", "triton", "kernelbench"):
            self.assertTrue(os.path.exists(ex(d, "compare.yaml")), d)


@unittest.skipUnless(HAVE_TORCH, "torch is not importable")
class TorchCpuExamples(Base):
    """torch on the CPU (slow: GPU-sized problems on a CPU)."""

    def test_pytorch_rmsnorm_on_cpu(self):
        d = ex("pytorch")
        ref = Impl("ref", os.path.join(d, "rmsnorm_ref.py"))
        import torch.nn.functional as F
        good = Impl("fused", os.path.join(d, "rmsnorm_fused.py"), None,
                    os.path.join(d, "rmsnorm_ref.py")) if hasattr(F, "rms_norm") else None
        wrong = Impl("tail", os.path.join(d, "rmsnorm_chunked_tail.py"), None,
                     os.path.join(d, "rmsnorm_ref.py"))
        env = {"MAGPIE_BENCH_INIT_SEED": "11"}
        self.check_variants(ref, good, wrong, [1, 2, 3, 4], timed=3, extra=env)
        ready, ns, error, rc = timing(ref, 1, 2, dict(env, MAGPIE_BENCH_SIZE="1"))
        self.assertEqual((rc, error), (0, None))
        self.assertEqual((ready["entry"], ready["size"], ready["device"]),
                         ("Model", "rows=7", "cpu"))

    def test_kernelbench_problem_unchanged_on_cpu(self):
        d = ex("kernelbench")
        problem = os.path.join(d, "Gemm_BiasAdd_ReLU.py")
        ref = Impl("problem", problem)
        addmm = Impl("addmm", os.path.join(d, "Gemm_BiasAdd_ReLU_addmm.py"), None, problem)
        wrong = Impl("wrong_init", os.path.join(d, "Gemm_BiasAdd_ReLU_wrong_init.py"), None,
                     problem)
        rows, cm = self.run_pair(ref, addmm, [5])
        self.assertTrue(all(r["ok"] for r in rows), rows)
        self.assertEqual(cm["entry"], "ModelNew")
        self.assertEqual(cm["trials"][0]["size"], "x:1024x4096")
        rows, _ = self.run_pair(ref, wrong, [5])
        self.assertFalse(rows[0]["ok"], rows)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    unittest.main(verbosity=2)
