#!/usr/bin/env bash
# The optimization loop end to end on one NVIDIA GPU (issue 6): examples/loop/run_loop.py with the
# torch backend — baseline benchmarks (N runs), a profiled run, stage split / roofline / gap
# analysis with kernel sources, magpie compare of the chosen kernel's candidates, the winner
# switched in, the same benchmarks again, kernel-level and end-to-end change with noise.
# Usage (repo root or anywhere): bash tests/gpu/loop_h200.sh [BUILD_DIR] [RUNS]
#   BUILD_DIR holds magpie (and libmagpie_cupti.so); default $MAGPIE_BUILD_DIR or build.
#   RUNS unprofiled benchmarks per side, default 3. Wall time ~4-5 min, hard limit 330 s + 90 s kernel check.
# Writes $OUT/loop/ (report JSON + markdown, logs, CSVs, compare report) and prints the table.
# Exit 77 without an NVIDIA GPU or without torch+triton with CUDA; 1 when the loop failed.
# MAGPIE_LOOP_BACKEND=numpy runs the same script on the CPU (no GPU checks): a check of the script.
set -uo pipefail
BACKEND=${MAGPIE_LOOP_BACKEND:-torch}
if [ "$BACKEND" = torch ]; then
  command -v nvidia-smi >/dev/null || { echo "skip: no nvidia-smi (no NVIDIA GPU)"; exit 77; }
  nvidia-smi -L >/dev/null 2>&1 || { echo "skip: nvidia-smi finds no GPU"; exit 77; }
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-${MAGPIE_BUILD_DIR:-build}}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
RUNS=${2:-3}
BIN="$BUILD/magpie"
PY=${MAGPIE_PYTHON:-python3}
OUT=${OUT:-$(mktemp -d)}
[ -x "$BIN" ] || { echo "FAIL: no magpie binary at $BIN"; exit 1; }
"$BIN" benchmark --help 2>/dev/null | grep -- '--base-url' > /dev/null || { echo "FAIL: $BIN has no serving client (--base-url)"; exit 1; }
if [ "$BACKEND" = torch ]; then
  if ! "$PY" -c 'import torch, triton, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "skip: $PY cannot import torch and triton with CUDA available"; exit 77
  fi
  "$PY" -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name(0))'
  nvidia-smi --query-gpu=index,name,memory.used,memory.total,utilization.gpu --format=csv,noheader
fi
"$BIN" --version
export MAGPIE_NO_PROGRESS=1 PYTHONUNBUFFERED=1 MAGPIE_PYTHON="$PY"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/magpie_loop.XXXXXX")
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$WORK/triton_cache}
# Every kernel against the eager reference first (~15 s; compiles the Triton kernels into the cache):
# a broken kernel is named here even if the loop then fails.
echo "=== check_kernels.py"
timeout 90 "$PY" "$ROOT/examples/loop/check_kernels.py" --backend "$BACKEND" > "$WORK.check" 2>&1; crc=$?
grep -E "FAIL|mismatch|check_kernels:" "$WORK.check" | grep -v "(expected)" | head -30
t0=$(date +%s)
# SIGTERM at 330 s: run_loop.py stops the server and still writes its report.
timeout -s TERM -k 20 330 "$PY" "$ROOT/examples/loop/run_loop.py" --magpie "$BIN" --backend "$BACKEND" --python "$PY" \
  --out "$WORK" --runs "$RUNS" > "$WORK.out" 2> "$WORK.err"
rc=$?
echo "=== run_loop.py rc=$rc ($(( $(date +%s) - t0 )) s)"
# Bring back what matters (not the per-request logs or big traces).
D="$OUT/loop"
mkdir -p "$D"
cp "$WORK.check" "$D/check_kernels.txt" 2>/dev/null; cp "$WORK.err" "$D/run_loop.err" 2>/dev/null; cp "$WORK.out" "$D/run_loop.out" 2>/dev/null
( cd "$WORK" && cp -r --parents loop_report.json loop_report.md logs "$D"/ 2>/dev/null
  find analysis compare -name '*.csv' -o -name '*.json' -size -20M -o -name '*.html' -size -20M 2>/dev/null |
    while read -r f; do cp --parents "$f" "$D"/; done
  find bench -name benchmark_report.json -o -name summary.txt 2>/dev/null | while read -r f; do cp --parents "$f" "$D"/; done
  find bench/profiled server_traces -name '*.pt.trace.json*' -size -25M 2>/dev/null | head -1 |
    while read -r f; do cp --parents "$f" "$D"/; done ) 2>/dev/null
if [ -f "$WORK/loop_report.json" ]; then
  "$PY" -c "
import json, sys
sys.path.insert(0, '$ROOT/examples/loop')
import loop_report
r = json.load(open('$WORK/loop_report.json'))
print(loop_report.table(r))
print()
for n, s in r['steps'].items():
    print('  %-20s %-8s %7.1f s%s' % (n, s['status'], s.get('seconds', 0), ('  ' + s.get('error', '')[:300]) if s.get('error') else ''))
"
else
  echo "no loop_report.json (rc=$rc)"
fi
if [ $rc -ne 0 ]; then
  echo "--- run_loop.py stderr (tail)"; tail -40 "$WORK.err"
  for f in "$WORK"/logs/server_*.log; do [ -f "$f" ] && { echo "--- $f (tail)"; tail -30 "$f"; }; done
fi
echo "outputs: $D"
[ $rc -eq 0 ] || exit 1
exit 0
