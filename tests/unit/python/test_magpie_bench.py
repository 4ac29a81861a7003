"""Unit tests of python/magpie_bench internals (run by tests/golden/py_harness_unit/run.sh)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

from magpie_bench import BenchError
from magpie_bench import device as dev
from magpie_bench import modes, program, tensors


class Npy(unittest.TestCase):
    def test_raw_writer_matches_numpy_load(self):
        with tempfile.TemporaryDirectory() as d:
            for name, arr in [("float32", np.arange(7, dtype=np.float32)),
                              ("int64", np.arange(12, dtype=np.int64).reshape(3, 4)),
                              ("bool", np.array([True, False, True])),
                              ("float16", np.array(1.5, dtype=np.float16)),
                              ("uint8", np.zeros((2, 0, 3), dtype=np.uint8))]:
                path = os.path.join(d, name + ".npy")
                tensors.write_npy_raw(path, tensors.NPY_DESCR[name], list(arr.shape),
                                      arr.tobytes())
                with open(path, "rb") as f:
                    head = f.read(10)
                    hlen = int.from_bytes(head[8:10], "little")
                self.assertEqual((10 + hlen) % 64, 0, name)
                back = np.load(path)
                self.assertEqual(back.dtype, arr.dtype, name)
                np.testing.assert_array_equal(back, arr)

    def test_host_copy_numpy_and_dtype_names(self):
        a = np.arange(6, dtype=">i4").reshape(2, 3)[:, ::2]
        h = tensors.host_copy(a)
        self.assertEqual((h.dtype, h.shape), ("int32", [2, 2]))
        self.assertTrue(h.array.flags["C_CONTIGUOUS"])
        self.assertEqual(h.array.dtype.byteorder in ("<", "="), True)
        np.testing.assert_array_equal(h.array, [[0, 2], [3, 5]])
        with self.assertRaises(BenchError):
            tensors.dtype_name(np.zeros(2, dtype=np.complex64))

    def test_atomic_json(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "manifest.json")
            tensors.write_json_atomic(path, {"a": [1, 2]})
            tensors.write_json_atomic(path, {"a": [3]})
            with open(path) as f:
                self.assertEqual(json.load(f), {"a": [3]})
            self.assertEqual(os.listdir(d), ["manifest.json"])

    def test_safe_name(self):
        self.assertEqual(tensors.safe_name("a b/c"), "a_b_c")
        self.assertEqual(tensors.safe_name(""), "_")


class Calls(unittest.TestCase):
    def test_split_call_args(self):
        s = program.split_call_args
        self.assertEqual(s(None), ([], {}))
        self.assertEqual(s([1, 2]), ([1, 2], {}))
        self.assertEqual(s((1,)), ([1], {}))
        self.assertEqual(s({"k": 1}), ([], {"k": 1}))
        self.assertEqual(s(([1], {"k": 2})), ([1], {"k": 2}))
        self.assertEqual(s(5), ([5], {}))

    def test_size_label(self):
        self.assertEqual(program.size_label({"n": 4099}), "n=4099")
        self.assertEqual(program.size_label({"m": 3, "shape": (4, 5)}), "m=3,shape=4x5")
        self.assertEqual(program.size_label(17), "17")

    def test_input_set_names_tensors_scalars(self):
        x, y = np.zeros(3, np.float32), np.ones((2, 2))
        s = program.InputSet([x, [y, y], 2, np.float32(0.5), "text"], {"z": x}, ["x", "pair"])
        self.assertEqual([n for n, _ in s.tensors], ["x", "pair_0", "pair_1", "z"])
        self.assertEqual(s.scalars, {"in2": 2, "in3": 0.5})
        self.assertEqual(s.shapes_label(), "x:3,pair_0:2x2,pair_1:2x2,z:3")

    def test_param_names(self):
        class K:
            def forward(self, a, b, *rest, c=1):
                return a

        self.assertEqual(program.param_names(K().forward), ["a", "b"])
        self.assertEqual(program.param_names(len), ["obj"])

    def test_flatten_outputs(self):
        a = np.zeros(2)
        self.assertEqual([n for n, _ in program.flatten_outputs(a)], ["out0"])
        self.assertEqual([n for n, _ in program.flatten_outputs((a, a))], ["out0", "out1"])
        self.assertEqual([n for n, _ in program.flatten_outputs({"y": a})], ["y"])
        self.assertEqual(program.flatten_outputs(np.float64(2))[0][1].shape, ())
        for bad in (1.0, None, (a, 3), [], "s"):
            with self.assertRaises(BenchError):
                program.flatten_outputs(bad)

    def test_resolve_entry_order_and_errors(self):
        mod = type(sys)("m")
        mod.Model, mod.run = object, (lambda: 0)
        self.assertEqual(program.resolve_entry(mod, "m.py", None, "run")[0], "Model")
        mod.ModelNew = object
        self.assertEqual(program.resolve_entry(mod, "m.py", None, "run")[0], "ModelNew")
        self.assertEqual(program.resolve_entry(mod, "m.py", "run", None)[0], "run")
        del mod.Model, mod.ModelNew
        self.assertEqual(program.resolve_entry(mod, "m.py", None, "run")[0], "run")
        with self.assertRaisesRegex(BenchError, "entry 'nope' not found.*run"):
            program.resolve_entry(mod, "m.py", "nope", None)
        mod.data = 3
        with self.assertRaisesRegex(BenchError, "not a class or function"):
            program.resolve_entry(mod, "m.py", "data", None)

    def test_load_module_unique_names_and_sys_path(self):
        with tempfile.TemporaryDirectory() as d:
            for name in ("a", "b"):
                os.makedirs(os.path.join(d, name))
                with open(os.path.join(d, name, "kernel.py"), "w") as f:
                    f.write("import helper_%s\nVALUE = helper_%s.V\n" % (name, name))
                with open(os.path.join(d, name, "helper_%s.py" % name), "w") as f:
                    f.write("V = %r\n" % name)
            ma = program.load_module(os.path.join(d, "a", "kernel.py"))
            mb = program.load_module(os.path.join(d, "b", "kernel.py"))
            self.assertEqual((ma.VALUE, mb.VALUE), ("a", "b"))
            self.assertNotEqual(ma.__name__, mb.__name__)
            self.assertIs(program.load_module(os.path.join(d, "a", "kernel.py")), ma)
            with self.assertRaisesRegex(BenchError, "not found"):
                program.load_module(os.path.join(d, "missing.py"))


class Environment(unittest.TestCase):
    def test_parse_seeds(self):
        self.assertEqual(modes.parse_seeds("1, 2,18446744073709551615"),
                         [1, 2, 18446744073709551615])
        for bad in ("", "1,-2", "18446744073709551616", "x"):
            with self.assertRaises(BenchError):
                modes.parse_seeds(bad)

    def test_seed_all_is_deterministic(self):
        dev.seed_all(2**63 + 5)
        a = np.random.rand(3)
        dev.seed_all(2**63 + 5)
        np.testing.assert_array_equal(a, np.random.rand(3))

    def test_flush_bytes(self):
        d = dev.Device("cpu")
        os.environ["MAGPIE_BENCH_FLUSH_BYTES"] = "12345"
        try:
            self.assertEqual(d.flush_bytes(), 12345)
            os.environ["MAGPIE_BENCH_FLUSH_BYTES"] = "0"
            llc = dev.host_llc_bytes()
            self.assertEqual(d.flush_bytes(), 2 * llc if llc else dev.HOST_FLUSH_FALLBACK)
        finally:
            del os.environ["MAGPIE_BENCH_FLUSH_BYTES"]
        flush = dev.HostFlush(4096)
        flush()
        self.assertEqual(bytes(flush.buffer), b"\x01" * 4096)

    def test_env_int(self):
        os.environ["MAGPIE_TEST_INT"] = "x1"
        try:
            with self.assertRaisesRegex(BenchError, "MAGPIE_TEST_INT"):
                dev.env_int("MAGPIE_TEST_INT", 0)
        finally:
            del os.environ["MAGPIE_TEST_INT"]
        self.assertEqual(dev.env_int("MAGPIE_TEST_UNSET", 7), 7)


FAKE_CUPTI = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
static void put(const char* what, uint64_t id) {
  FILE* f = fopen(getenv("FAKE_CUPTI_OUT"), "a");
  fprintf(f, "%s %llu\n", what, (unsigned long long)id);
  fclose(f);
}
void magpie_cupti_begin(uint64_t id) { put("begin", id); }
void magpie_cupti_end(uint64_t id) { put("end", id); }
void magpie_cupti_flush(void) { put("flush", 0); }
"""


class Cupti(unittest.TestCase):
    @unittest.skipUnless(shutil.which("cc"), "no C compiler")
    def test_marks_pass_uint64_ids(self):
        from magpie_bench.timing import CuptiMarks
        with tempfile.TemporaryDirectory() as d:
            src, lib = os.path.join(d, "fake.c"), os.path.join(d, "libfake.so")
            with open(src, "w") as f:
                f.write(FAKE_CUPTI)
            subprocess.run(["cc", "-shared", "-fPIC", "-o", lib, src], check=True)
            os.environ["FAKE_CUPTI_OUT"] = os.path.join(d, "out")
            marks = CuptiMarks(lib)
            marks.begin(18446744073709551615)
            marks.end(18446744073709551615)
            marks.flush()
            with open(os.path.join(d, "out")) as f:
                self.assertEqual(f.read().split("\n")[:3], ["begin 18446744073709551615",
                                                            "end 18446744073709551615",
                                                            "flush 0"])
        with self.assertRaisesRegex(BenchError, "MAGPIE_CUPTI_LIB"):
            CuptiMarks("/nonexistent/libmagpie_cupti.so")


if __name__ == "__main__":
    unittest.main(verbosity=2)
