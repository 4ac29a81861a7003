"""Drives `python3 -m magpie_bench` through every protocol mode (docs/harness-protocol.md) with
numpy-only fixtures, as a supervisor would, and checks what it writes and says.

Run: python3 check_protocol.py  (PYTHONPATH must contain <magpie>/python)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "fixtures")
PY = sys.executable


def fixture(name):
    return os.path.join(FIX, name)


def harness(args, env=None, **kw):
    """Runs the harness (not in timing mode); returns CompletedProcess with text output."""
    full = dict(os.environ)
    for k in list(full):
        if k.startswith("MAGPIE_"):
            del full[k]
    full.update(env or {})
    return subprocess.run([PY, "-m", "magpie_bench"] + args, env=full, capture_output=True,
                          text=True, timeout=120, **kw)


def correctness(args, seeds, out_dir, extra=None):
    env = {"MAGPIE_BENCH_PROTOCOL": "1", "MAGPIE_BENCH_MODE": "correctness",
           "MAGPIE_BENCH_OUT_DIR": out_dir, "MAGPIE_BENCH_SEEDS": ",".join(map(str, seeds))}
    env.update(extra or {})
    p = harness(args, env)
    manifest = None
    path = os.path.join(out_dir, "manifest.json")
    if os.path.exists(path):
        with open(path) as f:
            manifest = json.load(f)
    return p, manifest


class Conversation:
    """A timing-mode harness with its control channel on two pipes given by pass_fds. The fd
    numbers are passed through MAGPIE_BENCH_CTRL_IN/_OUT unless `literal_34` (then a bash
    wrapper moves them to 3 and 4 and the variables are left unset: the defaults)."""

    def __init__(self, args, env=None, literal_34=False):
        cmd_r, self.cmd_w = os.pipe()
        self.rep_r, rep_w = os.pipe()
        full = {k: v for k, v in os.environ.items() if not k.startswith("MAGPIE_")}
        # The supervisor's exchange memory (protocol 3): sized and filled by the harness.
        self.exchange = os.memfd_create("magpie-exchange", 0)
        full.update({"MAGPIE_BENCH_PROTOCOL": "3", "MAGPIE_BENCH_MODE": "timing",
                     "MAGPIE_BENCH_EXCHANGE": str(self.exchange)})
        full.update(env or {})
        cmd = [PY, "-m", "magpie_bench"] + args
        if literal_34:
            hi_r, hi_w = os.dup2(cmd_r, 20), os.dup2(rep_w, 21)
            os.close(cmd_r)
            os.close(rep_w)
            cmd_r, rep_w = hi_r, hi_w
            cmd = ["/bin/bash", "-c", 'exec 3<&20 4>&21 20<&- 21>&-; exec "$@"', "bash"] + cmd
        else:
            full.update({"MAGPIE_BENCH_CTRL_IN": str(cmd_r), "MAGPIE_BENCH_CTRL_OUT": str(rep_w)})
        self.proc = subprocess.Popen(cmd, env=full, pass_fds=(cmd_r, rep_w, self.exchange),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        os.close(cmd_r)
        os.close(rep_w)
        self.out = os.fdopen(self.cmd_w, "w", buffering=1)
        self.inp = os.fdopen(self.rep_r, "r")

    def read(self):
        return self.inp.readline().rstrip("\n")

    def send(self, line):
        self.out.write(line + "\n")
        self.out.flush()

    def finish(self, close=True):
        if close:
            try:
                self.out.close()
            except BrokenPipeError:
                pass
        stdout, stderr = self.proc.communicate(timeout=120)
        if not self.out.closed:
            try:
                self.out.close()
            except BrokenPipeError:
                pass
        self.inp.close()
        return self.proc.returncode, stdout, stderr


def load(out_dir, name):
    return np.load(os.path.join(out_dir, name))


class CorrectnessMode(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def sub(self, name):
        return os.path.join(self.dir, name)

    def test_manifest_sizes_scalars_and_files(self):
        p, m = correctness(["--module", fixture("vec_ref.py"), "--callable", "saxpy"],
                           [11, 12, 13], self.sub("a"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual((m["protocol"], m["n_sizes"], m["timed_size"]), (3, 2, 1))
        self.assertEqual(m["harness"], "magpie-bench-py/0.2")
        self.assertEqual((m["kernel"], m["entry"], m["device"]), ("vec_ref", "saxpy", "cpu"))
        self.assertFalse(m["poisoned"])
        self.assertIsNone(m["error"])
        self.assertEqual([t["size"] for t in m["trials"]], ["n=1000", "n=4099", "n=1000"])
        self.assertEqual([t["size_index"] for t in m["trials"]], [0, 1, 0])
        self.assertEqual([t["seed"] for t in m["trials"]], [11, 12, 13])
        t1 = m["trials"][1]
        self.assertTrue(t1["ok"])
        self.assertEqual(t1["scalars"], {"alpha": 2.5, "n": 4099})
        self.assertEqual([i["name"] for i in t1["inputs"]], ["x", "y"])
        self.assertEqual(t1["inputs"][0], {"name": "x", "dtype": "float32", "shape": [4099],
                                           "pre": "t1_in_x.npy", "post": "t1_in_x.post.npy"})
        self.assertEqual(t1["outputs"], [{"name": "out0", "dtype": "float32", "shape": [4099],
                                          "file": "t1_out_out0.npy", "poisoned": False}])
        x, y, out = (load(self.sub("a"), f) for f in ("t1_in_x.npy", "t1_in_y.npy",
                                                      "t1_out_out0.npy"))
        np.testing.assert_allclose(out, 2.5 * x + y, rtol=1e-6)
        np.testing.assert_array_equal(load(self.sub("a"), "t1_in_x.post.npy"), x)
        self.assertFalse(any(f.endswith(".tmp") for f in os.listdir(self.sub("a"))))

    def test_same_seed_same_inputs_across_modules(self):
        ref = ["--module", fixture("vec_ref.py"), "--callable", "saxpy"]
        cand = ["--module", fixture("vec_cand.py"), "--callable", "saxpy_blocked",
                "--inputs-from", fixture("vec_ref.py")]
        p1, m1 = correctness(ref, [7, 8], self.sub("r"))
        p2, m2 = correctness(cand, [7, 8], self.sub("c"))
        p3, m3 = correctness(ref, [9, 8], self.sub("d"))
        for p in (p1, p2, p3):
            self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(m2["inputs_from"], fixture("vec_ref.py"))
        for t in range(2):
            for name in ("x", "y"):
                f = "t%d_in_%s.npy" % (t, name)
                np.testing.assert_array_equal(load(self.sub("r"), f), load(self.sub("c"), f))
            np.testing.assert_allclose(load(self.sub("r"), "t%d_out_out0.npy" % t),
                                       load(self.sub("c"), "t%d_out_out0.npy" % t), rtol=1e-6)
        self.assertFalse(np.array_equal(load(self.sub("r"), "t0_in_x.npy"),
                                        load(self.sub("d"), "t0_in_x.npy")))
        np.testing.assert_array_equal(load(self.sub("r"), "t1_in_x.npy"),
                                      load(self.sub("d"), "t1_in_x.npy"))

    def test_class_entry_init_seed_and_modelnew_default(self):
        mod = ["--module", fixture("model_cls.py")]
        p1, m1 = correctness(mod, [5], self.sub("new"), {"MAGPIE_BENCH_INIT_SEED": "42"})
        p2, m2 = correctness(mod + ["--entry", "Model"], [5], self.sub("old"),
                             {"MAGPIE_BENCH_INIT_SEED": "42"})
        p3, m3 = correctness(mod + ["--entry", "Model"], [5], self.sub("other"),
                             {"MAGPIE_BENCH_INIT_SEED": "43"})
        for p in (p1, p2, p3):
            self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual((m1["entry"], m2["entry"], m1["init_seed"]), ("ModelNew", "Model", 42))
        self.assertEqual(m1["trials"][0]["size"], "x:3x257")
        new, old, other = (load(self.sub(d), "t0_out_out0.npy") for d in ("new", "old", "other"))
        np.testing.assert_array_equal(new, old)
        self.assertFalse(np.array_equal(old, other))

    def test_mutation_visible_in_post(self):
        p, m = correctness(["--module", fixture("mutating.py"), "--entry", "bad_inplace"], [3],
                           self.sub("m"))
        self.assertEqual(p.returncode, 0, p.stderr)
        inp = m["trials"][0]["inputs"][0]
        pre, post = load(self.sub("m"), inp["pre"]), load(self.sub("m"), inp["post"])
        np.testing.assert_allclose(post, 2 * pre)
        np.testing.assert_allclose(load(self.sub("m"), "t0_out_out0.npy"), 2 * pre + 1)

    def test_failing_trials_are_data(self):
        p, m = correctness(["--module", fixture("raising.py"), "--callable", "flaky"],
                           [1, 2, 3, 4], self.sub("f"))
        self.assertEqual(p.returncode, 1)
        ok = [t["ok"] for t in m["trials"]]
        self.assertEqual(ok, [True, False, False, True])
        self.assertEqual(m["trials"][1]["error"], "ValueError: kernel exploded at n=11")
        self.assertIn("expected a tensor", m["trials"][2]["error"])
        self.assertEqual(m["trials"][0]["inputs"][0]["name"], "x")
        self.assertEqual(m["trials"][0]["inputs"][0]["dtype"], "int32")
        self.assertIn("kernel exploded", p.stderr)

    def test_dict_outputs_dtypes_and_seed_argument(self):
        p, m = correctness(["--module", fixture("multi.py"), "--callable", "stats"], [99, 99, 5],
                           self.sub("d"))
        self.assertEqual(p.returncode, 0, p.stderr)
        outs = m["trials"][0]["outputs"]
        self.assertEqual([(o["name"], o["dtype"], o["shape"]) for o in outs],
                         [("sum", "float64", [4, 33]), ("mask", "bool", [4, 33]),
                          ("i16", "int16", [4, 33]), ("total", "int64", [])])
        a = load(self.sub("d"), "t0_in_a.npy")
        np.testing.assert_array_equal(a, np.random.default_rng(99).integers(
            -50, 50, size=(4, 33), dtype=np.int64))
        np.testing.assert_array_equal(load(self.sub("d"), "t0_out_mask.npy"), a > 0)
        np.testing.assert_array_equal(a, load(self.sub("d"), "t1_in_a.npy"))
        self.assertFalse(np.array_equal(a, load(self.sub("d"), "t2_in_a.npy")))

    def test_setup_errors(self):
        p, m = correctness(["--module", fixture("vec_ref.py"), "--entry", "nope"], [1],
                           self.sub("e1"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("entry 'nope' not found", p.stderr)
        self.assertIn("saxpy", p.stderr)
        self.assertIn("entry 'nope' not found", m["error"])
        self.assertEqual(m["trials"], [])
        p, m = correctness(["--module", fixture("bad_import.py"), "--callable", "f"], [1],
                           self.sub("e2"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("RuntimeError: this module cannot be imported", m["error"])
        p, m = correctness(["--module", fixture("vec_ref.py")], [1], self.sub("e3"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("none of ModelNew, Model is defined", p.stderr)
        p = harness(["--module", fixture("vec_ref.py"), "--callable", "saxpy"],
                    {"MAGPIE_BENCH_MODE": "correctness", "MAGPIE_BENCH_OUT_DIR": self.sub("e4")})
        self.assertEqual(p.returncode, 2)
        self.assertIn("MAGPIE_BENCH_SEEDS", p.stderr)
        p = harness(["--module", fixture("vec_cand.py"), "--callable", "saxpy_blocked"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("defines no get_inputs()", p.stderr)
        p = harness(["--module", fixture("vec_ref.py"), "--callable", "saxpy"],
                    {"MAGPIE_BENCH_MODE": "benchmark"})
        self.assertEqual(p.returncode, 2)


class OtherModes(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.count = os.path.join(self.tmp.name, "count")

    def tearDown(self):
        self.tmp.cleanup()

    def calls(self):
        if not os.path.exists(self.count):
            return 0
        with open(self.count, "rb") as f:
            n = len(f.read())
        os.unlink(self.count)
        return n

    def test_standalone(self):
        p = harness(["--module", fixture("vec_ref.py"), "--callable", "saxpy"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.splitlines(), ["vec_ref size n=1000: ok (out0:float32[1000])",
                                                 "vec_ref size n=4099: ok (out0:float32[4099])"])
        p = harness(["--module", fixture("raising.py"), "--callable", "flaky"])
        self.assertEqual(p.returncode, 1)
        self.assertIn("raising size n=11: FAILED: ValueError: kernel exploded at n=11", p.stdout)

    def test_profile_launch_count(self):
        env = {"MAGPIE_BENCH_MODE": "profile", "MAGPIE_BENCH_PROFILE_LAUNCHES": "4",
               "MAGPIE_BENCH_COLD": "1", "MAGPIE_BENCH_FLUSH_BYTES": "1048576",
               "COUNT_FILE": self.count}
        p = harness(["--module", fixture("counting.py"), "--callable", "counted"], env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.calls(), 3 + 4)

    def test_timing_conversation(self):
        env = {"COUNT_FILE": self.count, "MAGPIE_BENCH_BATCH": "3", "SLEEP_S": "0.002",
               "MAGPIE_BENCH_COLD": "1", "MAGPIE_BENCH_FLUSH_BYTES": "2097152",
               "MAGPIE_BENCH_SIZE": "0", "MAGPIE_BENCH_SEED": "77"}
        c = Conversation(["--module", fixture("counting.py"), "--callable", "counted"], env)
        head, _, body = c.read().partition(" ")
        self.assertEqual(head, "ready")
        ready = json.loads(body)
        self.assertEqual(ready["timer"], "host_clock")
        self.assertEqual((ready["batch"], ready["flush_bytes"], ready["size"]), (3, 2097152, "n=8"))
        self.assertEqual((ready["graph"], ready["blocking_kernel"], ready["device"]),
                         (False, False, "cpu"))
        self.assertEqual(self.calls(), 1)  # the untimed first launch before `ready`
        c.send("warmup 2")
        kind, ns = c.read().split()
        self.assertEqual(kind, "ok")
        self.assertGreaterEqual(int(ns), 2 * 2_000_000)
        for sid in (1, 18446744073709551615, 5):
            c.send("sample %d" % sid)
            fields = c.read().split()
            self.assertEqual(fields[:2], ["sample", str(sid)])
            self.assertGreaterEqual(int(fields[2]), 3 * 2_000_000)  # batch of 3 × 2 ms
        c.send("stop")
        rc, _, err = c.finish(close=False)
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.calls(), 2 + 3 * 3)

    def test_timing_on_fds_3_and_4(self):
        c = Conversation(["--module", fixture("vec_ref.py"), "--callable", "saxpy"],
                         literal_34=True)
        self.assertTrue(c.read().startswith("ready {"))
        c.send("warmup 0")
        self.assertEqual(c.read(), "ok 0")
        c.send("sample 1")
        self.assertRegex(c.read(), r"^sample 1 \d+$")
        c.send("stop")
        self.assertEqual(c.finish(close=False)[0], 0)

    def test_timing_outputs_in_exchange_memory(self):
        """Protocol 3: after a sample the outputs are in the exchange memory, as announced."""
        c = Conversation(["--module", fixture("vec_ref.py"), "--callable", "saxpy"])
        head, _, body = c.read().partition(" ")
        self.assertEqual(head, "ready", body)
        ex = json.loads(body)["exchange"]
        self.assertEqual(os.fstat(c.exchange).st_size, ex["bytes"])
        c.send("warmup 1")
        c.read()
        c.send("inputs 5")
        self.assertTrue(c.read().startswith("ok "))
        poisoned = os.pread(c.exchange, ex["bytes"], 0)
        c.send("sample 1")
        self.assertRegex(c.read(), r"^sample 1 \d+$")
        after = os.pread(c.exchange, ex["bytes"], 0)
        c.send("stop")
        self.assertEqual(c.finish(close=False)[0], 0)
        (o,) = ex["outputs"]
        self.assertEqual(o["dtype"], "float32")
        n = 1
        for d in o["shape"]:
            n *= d
        got = after[o["offset"]:o["offset"] + 4 * n]
        self.assertNotEqual(got, poisoned[o["offset"]:o["offset"] + 4 * n], "the sample wrote the exchange")
        self.assertNotIn(b"\xff\xff\xff\xff", got[:64], "not the poison pattern")

    def test_timing_errors(self):
        c = Conversation(["--module", fixture("raising.py"), "--callable", "flaky"],
                         {"MAGPIE_BENCH_SIZE": "1"})
        line = c.read()
        self.assertEqual(line, "error ValueError: kernel exploded at n=11")
        rc, _, _ = c.finish()
        self.assertNotEqual(rc, 0)
        c = Conversation(["--module", fixture("vec_ref.py"), "--entry", "missing"])
        self.assertTrue(c.read().startswith("error "), "setup error must reach the channel")
        self.assertEqual(c.finish()[0], 2)
        c = Conversation(["--module", fixture("vec_ref.py"), "--callable", "saxpy"])
        self.assertTrue(c.read().startswith("ready "))
        c.send("frobnicate 3")
        self.assertTrue(c.read().startswith("error bad command"))
        self.assertEqual(c.finish()[0], 1)
        c = Conversation(["--module", fixture("vec_ref.py"), "--callable", "saxpy"])
        self.assertTrue(c.read().startswith("ready "))
        rc, _, err = c.finish()  # EOF without `stop`
        self.assertEqual(rc, 1)
        self.assertIn("without 'stop'", err)

    def test_timing_without_channel(self):
        p = harness(["--module", fixture("vec_ref.py"), "--callable", "saxpy"],
                    {"MAGPIE_BENCH_MODE": "timing", "MAGPIE_BENCH_CTRL_IN": "57",
                     "MAGPIE_BENCH_CTRL_OUT": "58"})
        self.assertEqual(p.returncode, 2)
        self.assertIn("control channel", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
