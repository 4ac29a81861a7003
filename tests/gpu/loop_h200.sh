#!/usr/bin/env bash
# The optimization loop end to end on one NVIDIA GPU: `magpie optimize -c examples/loop/optimize.yaml`
# (the 32-layer example model, decode steps as CUDA graphs on both sides), then the A/A control
# in the same series (resumed from the loop's compare: the candidate side runs the baseline).
# Usage (repo root or anywhere): bash tests/gpu/loop_h200.sh [BUILD_DIR] [PAIRS] [NUM_PROMPTS]
#   BUILD_DIR holds magpie (and libmagpie_cupti.so); default $MAGPIE_BUILD_DIR or build.
#   PAIRS runs per side (default 3); NUM_PROMPTS per run (default 64: two waves at concurrency 32;
#   0 = calibrate). Limits: kernel check 60 s, loop 215 s, A/A control 105 s (CHECK_LIMIT_S,
#   LOOP_LIMIT_S, AA_LIMIT_S override): sized so that the series reaches its decision inside one
#   device call (H200 run 1 took 165 s up to the series; a pair of 64-prompt runs ~14 s); MAX_PAIRS
#   caps the runs per side (default: the config's max_pairs); SERIES_S / AA_SERIES_S are the time
#   budgets of the two series (--max-series-s; defaults 70 s / 55 s): no pair beyond PAIRS starts
#   unless it fits, so each series ends with a decision rather than at the limit.
# First check_kernels.py (every kernel against the eager reference, and decode tokens eager vs
# CUDA graph), so a broken kernel is named even when the loop cannot run (CHECK_KERNELS=0 skips it;
# AA_CONTROL=0 skips the A/A control).
# Writes $OUT/loop.tar.gz (reports, logs, CSVs, compare report, benchmark reports) and prints the
# tables. Exit 77 without an NVIDIA GPU or torch+triton with CUDA; 1 when the loop failed.
# MAGPIE_LOOP_BACKEND=numpy runs the same script with optimize_cpu.yaml (a check of the script).
# RESUME=DIR (a workspace, or a folder holding an earlier loop_report.json whose compare passed):
# no kernel check and no analysis; the loop and the A/A control both resume at switch_in from it.
# Last, the first runs after a start (tests/gpu/loop_first_run.py; FIRST_RUN=0 skips it): a
# baseline server per prefill padding (FIRST_RUN_PADS, default "0,128"), no warm-up pass,
# FIRST_RUN_RUNS runs in a row (default 3), each run's prefill, new-attention-shape and decode time
# from the server's step timing; limit FIRST_RUN_LIMIT_S (default 130 s), and it starts only while
# the script's total (TOTAL_LIMIT_S, default 540 s) leaves room for it. The series servers' step
# timing per burst ("engine: burst" lines of their logs) is printed for the loop and the A/A control.
set -uo pipefail
BACKEND=${MAGPIE_LOOP_BACKEND:-torch}
if [ "$BACKEND" = torch ]; then
  command -v nvidia-smi >/dev/null || { echo "skip: no nvidia-smi (no NVIDIA GPU)"; exit 77; }
  nvidia-smi -L >/dev/null 2>&1 || { echo "skip: nvidia-smi finds no GPU"; exit 77; }
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-${MAGPIE_BUILD_DIR:-build}}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
PAIRS=${2:-3}
NP=${3:-64}
BIN="$BUILD/magpie"
PY=${MAGPIE_PYTHON:-python3}
OUT=${OUT:-$(mktemp -d)}
CFG="$ROOT/examples/loop/optimize.yaml"
[ "$BACKEND" = torch ] || CFG="$ROOT/examples/loop/optimize_cpu.yaml"
[ -x "$BIN" ] || { echo "FAIL: no magpie binary at $BIN"; exit 1; }
"$BIN" optimize --help > /dev/null 2>&1 || { echo "FAIL: $BIN has no optimize subcommand"; exit 1; }
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
T0=$(date +%s)
RESUME=${RESUME:-}
if [ -z "$RESUME" ] && [ "${CHECK_KERNELS:-1}" != 0 ]; then
  echo "=== check_kernels.py"
  timeout "${CHECK_LIMIT_S:-60}" "$PY" "$ROOT/examples/loop/check_kernels.py" --backend "$BACKEND" > "$WORK/check_kernels.txt" 2> "$WORK/check_kernels.err"
  echo "check_kernels rc=$? ($(( $(date +%s) - T0 )) s)"
  grep -E "FAIL|mismatch|graphs|check_kernels:" "$WORK/check_kernels.txt" | grep -v "(expected)" | head -30
fi
NPF=()
[ "$NP" -gt 0 ] 2>/dev/null && NPF=(--num-prompts "$NP")
t0=$(date +%s)
# SIGTERM at the limit: magpie optimize ends the step, stops its servers and writes the report.
MP=()
[ -n "${MAX_PAIRS:-}" ] && MP=(--max-pairs "$MAX_PAIRS")
SERIES_S=${SERIES_S:-70}
AA_SERIES_S=${AA_SERIES_S:-55}
RES=()
[ -n "$RESUME" ] && RES=(--resume "$RESUME" --from-step switch_in)
timeout -s TERM -k 20 "${LOOP_LIMIT_S:-215}" "$BIN" optimize -c "$CFG" --workspace "$WORK/loop" --pairs "$PAIRS" \
  --max-series-s "$SERIES_S" "${NPF[@]}" "${MP[@]}" "${RES[@]}" > "$WORK/loop.out" 2> "$WORK/loop.err"
rc=$?
echo "=== magpie optimize rc=$rc ($(( $(date +%s) - t0 )) s)"
cat "$WORK/loop.out"
arc=skipped
if [ "${AA_CONTROL:-1}" != 0 ] && "$PY" -c "import json,sys; r=json.load(open('$WORK/loop/loop_report.json')); sys.exit(0 if r['steps'].get('compare',{}).get('status')=='ok' else 1)" 2>/dev/null; then
  t0=$(date +%s)
  AA_FROM=$WORK/loop
  [ -n "$RESUME" ] && AA_FROM=$RESUME
  timeout -s TERM -k 20 "${AA_LIMIT_S:-105}" "$BIN" optimize -c "$CFG" --workspace "$WORK/aa" --resume "$AA_FROM" \
    --from-step switch_in --control aa --pairs "$PAIRS" --max-series-s "$AA_SERIES_S" "${NPF[@]}" "${MP[@]}" > "$WORK/aa.out" 2> "$WORK/aa.err"
  arc=$?
  echo "=== A/A control rc=$arc ($(( $(date +%s) - t0 )) s)"
  cat "$WORK/aa.out"
fi
FR=skipped
if [ "${FIRST_RUN:-1}" != 0 ]; then
  FR_LIMIT=${FIRST_RUN_LIMIT_S:-130}
  if [ $(( $(date +%s) - T0 + FR_LIMIT )) -le "${TOTAL_LIMIT_S:-540}" ]; then
    t0=$(date +%s)
    echo "=== first runs after a server start (no warm-up pass)"
    timeout -s TERM -k 20 $(( FR_LIMIT + 15 )) "$PY" "$ROOT/tests/gpu/loop_first_run.py" --magpie "$BIN" --out "$WORK/first_run" \
      --backend "$BACKEND" --pads "${FIRST_RUN_PADS:-0,128}" --runs "${FIRST_RUN_RUNS:-3}" --limit-s "$FR_LIMIT" --python "$PY" \
      2> "$WORK/first_run.err"
    FR=$?
    echo "first_run rc=$FR ($(( $(date +%s) - t0 )) s)"
    [ "$FR" -eq 0 ] || tail -5 "$WORK/first_run.err"
  else
    echo "=== first runs after a server start: skipped (elapsed $(( $(date +%s) - T0 )) s + $FR_LIMIT s > TOTAL_LIMIT_S ${TOTAL_LIMIT_S:-540})"
  fi
fi
# Bring back what matters (not the per-request logs or the traces), as one file.
( cd "$WORK" && find . -maxdepth 1 \( -name '*.txt' -o -name '*.out' -o -name '*.err' \) > files.lst
  [ -d first_run ] && find first_run \( -name '*.log' -o -name 'first_run.json' \) >> files.lst
  for w in loop aa; do
    [ -d "$w" ] || continue
    find "$w" -maxdepth 1 -name 'loop_report.*' >> files.lst
    find "$w/logs" -type f >> files.lst 2>/dev/null
    find "$w/analysis" \( -name '*.csv' -o -name 'trace_sources.json' -o -name 'report.json' \) -size -8M >> files.lst 2>/dev/null
    find "$w/compare" -name 'compare_report.json' >> files.lst 2>/dev/null
    find "$w/bench" \( -name benchmark_report.json -o -name summary.txt \) >> files.lst 2>/dev/null
  done
  tar czf "$OUT/loop.tar.gz" -T files.lst ) 2>/dev/null
ls -la "$OUT"
for w in loop aa; do
  [ -f "$WORK/$w/loop_report.json" ] || continue
  "$PY" - "$WORK/$w/loop_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("--- %s: outcome %s, stop %s" % (sys.argv[1], r["outcome"], (r.get("stop") or {}).get("code")))
for n, s in r["steps"].items():
    print("  %-20s %-8s %7.1f s%s" % (n, s["status"], s.get("seconds", 0), ("  " + s.get("error", "")[:300]) if s.get("error") else ""))
seq = (r.get("design") or {}).get("sequence") or []
runs = {"A": list(r.get("baseline_runs") or []), "B": list(r.get("after_runs") or [])}
if seq:
    print("  series (in order):")
    seen = {"A": 0, "B": 0}
    for side in seq:
        x = runs[side][seen[side]]["metrics"]
        print("    %s%d  %8.1f tok/s  TPOT %6.3f ms" % (side, seen[side], x.get("output_throughput") or 0, x.get("tpot_mean_ms") or 0))
        seen[side] += 1
for m, e in ((r.get("e2e") or {}).get("metrics") or {}).items():
    if m in ("output_throughput", "tpot_mean_ms"):
        print("  %-18s change %+7.2f%%  Welch p %.2g  beyond noise %s  smallest detectable change %.2f%%" % (
            m, e.get("change_pct") or 0, e.get("p_value") if e.get("p_value") is not None else float("nan"),
            e.get("beyond_noise"), e.get("mde_pct") if e.get("mde_pct") is not None else float("nan")))
if r.get("prediction"):
    p = r["prediction"]
    print("  prediction: %s" % json.dumps(p, sort_keys=True)[:600])
if r.get("control_result"):
    print("  control: %s" % r["control_result"])
if (r.get("design") or {}).get("budget_stop"):
    print("  budget stop: %s" % r["design"]["budget_stop"])
PY
  # Each series server's step timing per burst (warm-up pass, then one burst per run).
  for f in "$WORK/$w"/logs/server_A*.log "$WORK/$w"/logs/server_B*.log; do
    [ -f "$f" ] || continue
    echo "  $(basename "$f"):"
    grep -h "engine: burst" "$f" | sed 's/^engine: /    /' | tail -16
  done
done
if [ $rc -ne 0 ]; then
  echo "--- magpie optimize stderr (tail)"; tail -40 "$WORK/loop.err"
  for f in "$WORK"/loop/logs/server_*.log; do [ -f "$f" ] && { echo "--- $f (tail)"; tail -20 "$f"; }; done
fi
echo "total $(( $(date +%s) - T0 )) s; outputs: $OUT/loop.tar.gz"
[ $rc -eq 0 ] || exit 1
exit 0
