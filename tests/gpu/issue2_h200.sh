#!/usr/bin/env bash
# H200 acceptance run for analyze/compare (issue 2): cuda, triton, pytorch and KernelBench
# examples through the real magpie binary, A/A and slower-variant compares, CUPTI vs ncu.
# Usage (repo root): bash tests/gpu/issue2_h200.sh [BUILD_DIR]   Writes logs under $OUT.
# Exit 77 without an NVIDIA GPU.
set -uo pipefail
command -v nvidia-smi >/dev/null || { echo "skip: no nvidia-smi (no NVIDIA GPU)"; exit 77; }
BUILD=${1:-${MAGPIE_BUILD_DIR:-build}}
BIN="$BUILD/magpie"
OUT=${OUT:-$(mktemp -d)}
R="$OUT/results"
mkdir -p "$R" "$OUT/logs"
export MAGPIE_NO_PROGRESS=1 PYTHONUNBUFFERED=1
step() {  # step NAME ARGS... : run magpie, keep stdout/stderr, print the tail
  local name=$1; shift
  # ISSUE2_ONLY="name ..." runs only the named steps
  if [ -n "${ISSUE2_ONLY:-}" ] && [[ " $ISSUE2_ONLY " != *" $name "* ]]; then return; fi
  local t0=$(date +%s)
  timeout 400 "$BIN" "$@" -o "$R/$name" > "$OUT/logs/$name.txt" 2> "$OUT/logs/$name.err"
  local rc=$?
  echo "=== $name rc=$rc ($(( $(date +%s) - t0 )) s): magpie $*"
  grep -E "Kernel [0-9]+:|Winner|Correctness:|Performance:|Kernel: |Error" "$OUT/logs/$name.txt" | head -20
  [ $rc -le 1 ] || tail -5 "$OUT/logs/$name.err"
}
step cuda_analyze analyze -k examples/cuda/analyze.yaml --max-time 5
step cuda_analyze_offbyone analyze -k examples/cuda/analyze_offbyone.yaml --no-perf
step cuda_compare compare -k examples/cuda/compare.yaml --max-time 8
step cuda_aa compare -k examples/cuda/compare_aa.yaml --max-time 8
step cuda_slow10 compare -k examples/cuda/compare_slow10.yaml --max-time 8
step triton_compare compare -k examples/triton/compare.yaml --max-time 6
step pytorch_compare compare -k examples/pytorch/compare.yaml --max-time 6
step kernelbench_compare compare -k examples/kernelbench/compare.yaml --max-time 6
python3 - "$R" <<'PY' | tee "$OUT/summary.txt"
import glob, json, os, sys
root = sys.argv[1]
print("%-22s %-26s %-10s %-9s %-11s %9s %12s %s" % ("run", "kernel", "correct", "method", "verdict", "speedup", "median_us", "timing/ncu"))
for rep in sorted(glob.glob(root + "/*/*/*_report.json")):
    run = rep.split("/")[-3]
    r = json.load(open(rep))
    res = r["results"]
    kernels = res["kernel_results"] if isinstance(res, dict) else res
    verdicts = {v["kernel_id"]: v for v in res.get("verdicts", [])} if isinstance(res, dict) else {}
    for k in kernels:
        kid = k["extra"]["kernel_id"]
        t = k.get("timing") or {}
        med = t.get("stats_ns", {}).get("median", 0) / 1e3 if t else 0
        v = verdicts.get(kid, {})
        xc = ""
        ncu = (k.get("performance_result") or {}).get("ncu") or {}
        for c in ncu.get("cross_check", []):
            xc += " ncu %.2fus vs cupti %.2fus (%+.2f%%)" % (c["ncu_median_ns"] / 1e3, c["cupti_median_ns"] / 1e3, c["diff_pct"])
        if t:
            cc = t.get("cross_check", {})
            xc = "%s %s n=%s%s%s" % (t.get("source"), t.get("stop_reason"), t.get("samples"),
                                     " ev/cupti=%.3f" % cc["harness_over_cupti"] if cc else "", xc)
            if t.get("warnings"): xc += " WARN:" + ";".join(t["warnings"])[:120]
        print("%-22s %-26s %-10s %-9s %-11s %9s %12.2f %s" % (run, kid[:26], k["outcome"], k["correctness_method"],
              v.get("verdict", "-"), "%.3f" % v["speedup_vs_baseline"] if v.get("speedup_vs_baseline") else "-", med, xc))
        if k["outcome"] != "passed":
            print("      errors:", "; ".join(k["errors"])[:300])
PY
tar czf "$OUT/issue2_logs.tar.gz" -C "$OUT" logs summary.txt $(cd "$OUT" && ls -d results/*/*/*_report.json results/*/*/config.yaml 2>/dev/null)
