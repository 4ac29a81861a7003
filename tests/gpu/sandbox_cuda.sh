#!/usr/bin/env bash
# Issue 35 on a GPU: the candidate sandbox (user, mount, PID, network, IPC namespaces) on the GPU
# machine, and one CUDA compare through it: every harness process sandboxed, the GPU reachable
# inside, CUPTI timing, NVML's gpu_processes check. Exit 77 without an NVIDIA GPU.
# Usage (repo root): bash tests/gpu/sandbox_cuda.sh [BUILD_DIR]   (BUILD_DIR/magpie, lib/; default
# $MAGPIE_BUILD_DIR or build). Logs and the report under $OUT (a temporary directory if unset).
set -u
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || { echo "skip: no NVIDIA GPU (nvidia-smi -L failed)"; exit 77; }
BUILD=${1:-${MAGPIE_BUILD_DIR:-build}}
BIN="$(cd "$BUILD" && pwd)/magpie"
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
OUT=${OUT:-$(mktemp -d)}; mkdir -p "$OUT"
export MAGPIE_NO_PROGRESS=1 MAGPIE_HOME="$SRC" MAGPIE_DATA_DIR="$SRC/data" MAGPIE_NO_STORE=1
T0=$(date +%s)
rc=0
nvidia-smi -L
( unshare -U -m -p -n -f --mount-proc true && echo "user namespaces: ok" ) 2>&1 | tail -2
"$BIN" __sandbox -- "$(command -v nvidia-smi)" -L 2>&1 | tail -2
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "FAIL: nvidia-smi inside the sandbox"; rc=1; }
(cd "$SRC" && timeout 120 "$BIN" compare -k examples/cuda/compare.yaml --max-time 3 -o "$OUT/cmp") \
  > "$OUT/cmp.txt" 2> "$OUT/cmp.err"
crc=$?
echo "compare rc=$crc after $(( $(date +%s) - T0 )) s"
cat "$OUT/cmp.txt"; tail -6 "$OUT/cmp.err"
python3 - "$OUT/cmp" <<'PY' || rc=1
import glob, json, sys
files = glob.glob(sys.argv[1] + "/*/compare_report.json")
assert files, "no compare_report.json"
r = json.load(open(files[0]))
bad = []
for k in r["results"]["kernel_results"]:
    checks = {c["name"]: c for c in (k.get("integrity") or {}).get("checks", [])}
    for name in ("sandbox", "gpu_processes", "timer", "cupti_channel", "clock_gain", "input_generation",
                 "cpu_between_samples", "timed_outputs"):
        c = checks.get(name)
        if c:
            print(f'{k["kernel_config"]["kernel_id"][:24]:24} {name:20} {c["status"]:7} {c["detail"][:100]}')
    if k.get("outcome") == "passed":
        for need in ("sandbox", "cupti_channel"):
            if checks.get(need, {}).get("status") != "pass":
                bad.append(f'{k["kernel_config"]["kernel_id"]}: {need} is {checks.get(need, {}).get("status")}')
assert not bad, bad
PY
[ $crc -eq 0 ] || rc=1
echo "total $(( $(date +%s) - T0 )) s, rc=$rc"
exit $rc
