"""Test-side helpers: run an example through `python3 -m magpie_bench` (correctness / timing)
and compare a candidate's outputs with a reference's the way the supervisor's gate does
(atol + rtol·|ref| per dtype, shape/dtype/NaN pattern). Used by check_examples.py (CI, CPU)
and tests/gpu/python_harness.sh (H200); the real gate is magpie's (src/kernel/)."""
import json
import os
import subprocess
import sys

import numpy as np

from magpie_bench.drive import converse

TOLERANCE = {"float16": (1e-2, 1e-2), "bfloat16": (1e-2, 1e-2)}  # dtype → (atol, rtol)
DEFAULT_TOLERANCE = (1e-4, 1e-4)


class Impl:
    """One implementation: harness arguments (--module ... --entry ... --inputs-from ...)."""

    def __init__(self, name, module, entry=None, inputs_from=None):
        self.name = name
        self.args = ["--module", module]
        if entry:
            self.args += ["--entry", entry]
        if inputs_from:
            self.args += ["--inputs-from", inputs_from]


def harness_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAGPIE_BENCH_")}
    env["MAGPIE_BENCH_PROTOCOL"] = "1"
    env.update(extra or {})
    return env


def correctness(impl, seeds, out_dir, extra=None, timeout_s=300):
    """Runs correctness mode; returns (rc, manifest or None, stderr tail)."""
    env = harness_env(extra)
    env.update({"MAGPIE_BENCH_MODE": "correctness", "MAGPIE_BENCH_OUT_DIR": out_dir,
                "MAGPIE_BENCH_SEEDS": ",".join(str(s) for s in seeds)})
    p = subprocess.run([sys.executable, "-m", "magpie_bench"] + impl.args, env=env,
                       capture_output=True, text=True, timeout=timeout_s)
    path = os.path.join(out_dir, "manifest.json")
    manifest = None
    if os.path.exists(path):
        with open(path) as f:
            manifest = json.load(f)
    return p.returncode, manifest, p.stderr[-3000:]


def load_tensor(out_dir, file, dtype):
    """float64 (or bool/int) array of a saved tensor; bfloat16 is decoded from its '<u2'."""
    a = np.load(os.path.join(out_dir, file))
    if dtype == "bfloat16":
        a = (a.astype(np.uint32) << 16).view(np.float32)
    with np.errstate(all="ignore"):  # garbage outputs may hold NaN / huge values
        return a.astype(np.float64) if a.dtype.kind == "f" else a


def compare_output(ref, cand, dtype):
    """(ok, max_abs_err, n_bad) of cand vs ref with the dtype's atol + rtol·|ref|."""
    if ref.shape != cand.shape:
        return False, float("inf"), -1
    if ref.dtype.kind != "f":
        bad = int(np.count_nonzero(ref != cand))
        return bad == 0, float(bad), bad
    atol, rtol = TOLERANCE.get(dtype, DEFAULT_TOLERANCE)
    nan_mismatch = np.isnan(ref) != np.isnan(cand)
    both = ~np.isnan(ref) & ~np.isnan(cand)
    with np.errstate(all="ignore"):
        err = np.abs(ref - cand)
    bad = nan_mismatch | (both & ~(err <= atol + rtol * np.abs(ref)))
    max_err = float(np.max(np.where(both, err, 0.0))) if ref.size else 0.0
    if nan_mismatch.any():
        max_err = float("nan")
    return not bad.any(), max_err, int(np.count_nonzero(bad))


def compare_runs(ref_dir, ref_manifest, cand_dir, cand_manifest):
    """Per trial: {"size", "size_index", "ok", "max_abs", "bad", "error"} of cand vs ref."""
    rows = []
    for rt, ct in zip(ref_manifest["trials"], cand_manifest["trials"]):
        row = {"size": rt["size"], "size_index": rt["size_index"], "ok": False,
               "max_abs": float("nan"), "bad": -1, "error": ct["error"] or rt["error"]}
        if rt["ok"] and ct["ok"]:
            row["error"] = None
            if [o["name"] for o in rt["outputs"]] != [o["name"] for o in ct["outputs"]]:
                row["error"] = "different outputs"
            else:
                row["ok"], row["max_abs"], row["bad"] = True, 0.0, 0
                for ro, co in zip(rt["outputs"], ct["outputs"]):
                    ok, err, bad = compare_output(load_tensor(ref_dir, ro["file"], ro["dtype"]),
                                                  load_tensor(cand_dir, co["file"], co["dtype"]),
                                                  ro["dtype"])
                    if ro["dtype"] != co["dtype"]:
                        ok = False
                    row["ok"] = row["ok"] and ok
                    row["max_abs"] = max(row["max_abs"], err) if err == err else err
                    row["bad"] += max(bad, 0)
        rows.append(row)
    return rows


def timing(impl, warmup=5, samples=10, extra=None):
    """A timing conversation through magpie_bench.drive: (ready, samples_ns, error, rc)."""
    env = harness_env(extra)
    r = converse([sys.executable, "-m", "magpie_bench"] + impl.args, warmup, samples, env)
    return r["ready"], r["samples_ns"], r["error"] or (r["stderr"][-500:] if r["rc"] else None), \
        r["rc"]
