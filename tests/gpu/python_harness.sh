#!/usr/bin/env bash
# H200 check of python/magpie_bench on the pytorch / triton / kernelbench examples, without the
# supervisor: each implementation runs in correctness mode (2 seeds: the sizes that are not
# multiples of the block) and is compared with its reference (atol + rtol·|ref|), then in timing
# mode (cold L2, 5 warm-ups, 10 samples) through magpie_bench.drive. With libmagpie_cupti.so
# (MAGPIE_CUPTI_LIB, or found in MAGPIE_BUILD_DIR) the fused Triton kernel is also timed with
# CUPTI marks. Prints one table row per implementation; exit 0 when every correct variant
# matches and every wrong one is caught, 1 otherwise, 77 without torch.cuda. About 1-2 minutes.
# MAGPIE_PY_HARNESS_ONLY=<substring> keeps the matching rows (and their references).
set -uo pipefail
src="${MAGPIE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
py="${MAGPIE_PYTHON:-python3}"
if ! "$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
  echo "SKIP: torch.cuda is not available to $py"
  exit 77
fi
cupti="${MAGPIE_CUPTI_LIB:-}"
if [ -z "$cupti" ] && [ -n "${MAGPIE_BUILD_DIR:-}" ]; then
  cupti="$(find "$MAGPIE_BUILD_DIR" -maxdepth 3 -name libmagpie_cupti.so 2>/dev/null | head -n1)"
fi
export PYTHONPATH="$src/python:$src/tests/golden/py_harness_examples${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/driver.py" <<'PY'
import json, os, statistics, sys, time
from concurrent.futures import ThreadPoolExecutor
from example_check import Impl, compare_runs, correctness, timing

src, cupti, work = sys.argv[1], sys.argv[2], sys.argv[3]
ex = lambda *p: os.path.join(src, "examples", *p)
pt_ref, tr_ref, kb_ref = ex("pytorch", "rmsnorm_ref.py"), ex("triton", "silu_mul_ref.py"), \
    ex("kernelbench", "Gemm_BiasAdd_ReLU.py")
# (row name, implementation, reference row or None, expected: ref | correct | wrong)
rows = [
    ("pytorch/rmsnorm_ref", Impl("pt_ref", pt_ref), None, "ref"),
    ("pytorch/rmsnorm_fused", Impl("pt_fused", ex("pytorch", "rmsnorm_fused.py"), None, pt_ref),
     "pytorch/rmsnorm_ref", "correct"),
    ("pytorch/rmsnorm_chunked_tail", Impl("pt_tail", ex("pytorch", "rmsnorm_chunked_tail.py"),
     None, pt_ref), "pytorch/rmsnorm_ref", "wrong"),
    ("triton/silu_mul_ref", Impl("tr_ref", tr_ref, "silu_mul"), None, "ref"),
    ("triton/silu_mul_triton", Impl("tr_ok", ex("triton", "silu_mul_triton.py"),
     "silu_mul_triton", tr_ref), "triton/silu_mul_ref", "correct"),
    ("triton/silu_mul_triton_tail", Impl("tr_tail", ex("triton", "silu_mul_triton_tail.py"),
     "silu_mul_triton_tail", tr_ref), "triton/silu_mul_ref", "wrong"),
    ("kernelbench/Gemm_BiasAdd_ReLU", Impl("kb_ref", kb_ref), None, "ref"),
    ("kernelbench/..._addmm", Impl("kb_addmm", ex("kernelbench", "Gemm_BiasAdd_ReLU_addmm.py"),
     None, kb_ref), "kernelbench/Gemm_BiasAdd_ReLU", "correct"),
    ("kernelbench/..._triton", Impl("kb_triton", ex("kernelbench", "Gemm_BiasAdd_ReLU_triton.py"),
     None, kb_ref), "kernelbench/Gemm_BiasAdd_ReLU", "correct"),
    ("kernelbench/..._wrong_init", Impl("kb_wrong", ex("kernelbench",
     "Gemm_BiasAdd_ReLU_wrong_init.py"), None, kb_ref), "kernelbench/Gemm_BiasAdd_ReLU", "wrong"),
]
only = os.environ.get("MAGPIE_PY_HARNESS_ONLY")  # optional substring filter on row names
if only:
    keep = {r[0] for r in rows if only in r[0]}
    rows = [r for r in rows if r[0] in keep or any(r[0] == k[2] for k in rows if k[0] in keep)]
t0 = time.time()
seeds = [1, 2]
env = {"MAGPIE_BENCH_INIT_SEED": "7"}

def run_corr(row):
    name, impl = row[0], row[1]
    d = os.path.join(work, impl.name)
    return name, (d,) + correctness(impl, seeds, d, env)

with ThreadPoolExecutor(4) as pool:
    corr = dict(pool.map(run_corr, rows))

def cupti_spans(path):
    """median span (ms) and kernels per sample from the injection library's records."""
    ids, kernels = {}, []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("kind") == "extcorr":
                ids[r["corr"]] = r["id"]
            elif r.get("kind") == "kernel":
                kernels.append(r)
    per = {}
    for k in kernels:
        if k["corr"] in ids:
            per.setdefault(ids[k["corr"]], []).append(k)
    spans = [(max(k["end"] for k in ks) - min(k["start"] for k in ks)) / 1e6 for ks in per.values()]
    if not spans:
        return None, 0
    return statistics.median(spans), statistics.median(len(ks) for ks in per.values())

failures = []
print("%-30s %-8s %-7s %-24s %-10s %-12s %s" % ("example", "expect", "trials", "vs reference",
                                               "median_ms", "timer", "notes"))
for name, impl, ref, expect in rows:
    d, rc, m, err = corr[name]
    trials = "%d/%d" % (sum(t["ok"] for t in m["trials"]), len(seeds)) if m else "rc=%d" % rc
    verdict = "-"
    if ref is not None and m is not None and corr[ref][2] is not None:
        cmp = compare_runs(corr[ref][0], corr[ref][2], d, m)
        match = all(r["ok"] for r in cmp)
        worst = max((r["max_abs"] for r in cmp), default=0.0)
        verdict = ("match" if match else "MISMATCH") + " max|d|=%.2g" % worst
        if match != (expect == "correct"):
            failures.append("%s: expected %s, got %s" % (name, expect, verdict))
    elif expect != "ref" or rc != 0:
        failures.append("%s: correctness run failed (rc=%d): %s" % (name, rc, err[-300:]))
    notes = []
    variants = [({}, "")]
    if name == "triton/silu_mul_triton":
        variants.append(({"MAGPIE_BENCH_GRAPH": "1"}, "graph"))
        if cupti:
            variants.append(({"MAGPIE_CUPTI_LIB": cupti, "CUDA_INJECTION64_PATH": cupti,
                              "MAGPIE_CUPTI_OUT": os.path.join(work, "cupti.jsonl")}, "cupti"))
    med = "-"
    timer = "-"
    for extra, tag in variants:
        ready, ns, error, trc = timing(impl, 5, 10, dict(env, MAGPIE_BENCH_COLD="1", **extra))
        if error or not ns:
            failures.append("%s%s: timing failed: %s" % (name, "[" + tag + "]" if tag else "", error))
            continue
        ms = statistics.median(ns) / 1e6
        if not tag:
            med, timer = "%.4f" % ms, ready["timer"]
            notes.append("blk=%s size=%s" % (ready["blocking_kernel"], ready["size"]))
        elif tag == "graph":
            notes.append("graph=%.4f(%s)" % (ms, ready["graph"]))
        else:
            span, nk = cupti_spans(extra["MAGPIE_CUPTI_OUT"])
            notes.append("cupti_span=%s events=%.4f kernels/sample=%g" % (
                "%.4f" % span if span is not None else "none", ms, nk))
            if span is None:
                failures.append("%s: no CUPTI records joined to samples" % name)
    print("%-30s %-8s %-7s %-24s %-10s %-12s %s" % (name, expect, trials, verdict, med, timer,
                                                   " ".join(notes)), flush=True)
print("wall %.1f s; cupti lib: %s" % (time.time() - t0, cupti or "none (set MAGPIE_CUPTI_LIB)"))
for f in failures:
    print("FAIL:", f)
print("RESULT:", "PASS" if not failures else "FAIL (%d)" % len(failures))
sys.exit(1 if failures else 0)
PY
"$py" "$work/driver.py" "$src" "$cupti" "$work" </dev/null
