#!/usr/bin/env bash
# Issue 19 on the H200 (tests/gpu): integrity checks through the real binary on CUDA, triton and
# pytorch kernels; CUPTI vs ncu investigation; adversarial suites; A/A and 3%-slower runs; the
# cost benchmark. Stages (INTEGRITY_ONLY="smoke cvn ..." runs a subset, in this order):
#   smoke  analyze/compare of the CUDA example (CUPTI channel, checks, verdicts); SMOKE_TRITON=1
#          adds the triton compare. A smoke analyze without CUPTI timing stops the run (the
#          later stages would only repeat that failure).
#   adv    adversarial suites (tests/gpu/adversarial_cuda, tests/gpu/adversarial_torch)
#   aa     A/A pairs over four problem types, and a 3% slower variant (CVN_RESERVE_S: seconds
#          of the budget it leaves to cvn)
#   cvn    CUPTI vs ncu: tests/gpu/cupti_vs_ncu.cu under five pre-conditions, ncu, magpie variants
#          (CVN_VARIANTS, default "default:: hot:--hot noblock:: bigflush::")
#   cost   examples/kernelbench and examples/cuda compare wall times (OLD_BIN: the binary before)
# BUDGET_S: seconds for the whole script; every stage's limit is cut to what is left.
# Usage (repo root): bash tests/gpu/integrity_h200.sh BUILD_DIR   (BUILD_DIR/magpie, lib/)
# Writes $OUT/integrity.tgz (logs and reports, re-packed after every stage); exit 77 without a GPU.
set -uo pipefail
command -v nvidia-smi >/dev/null || { echo "skip: no nvidia-smi (no NVIDIA GPU)"; exit 77; }
BUILD=${1:-${MAGPIE_BUILD_DIR:-build}}
BIN="$(cd "$BUILD" && pwd)/magpie"
SRC="$(pwd)"
OUT=${OUT:-$(mktemp -d)}
W=$(mktemp -d)
R="$W/results"
mkdir -p "$R" "$W/logs" "$OUT"
export MAGPIE_NO_PROGRESS=1 PYTHONUNBUFFERED=1 MAGPIE_HOME="$SRC" MAGPIE_DATA_DIR="$SRC/data"
END=$(( $(date +%s) + ${BUDGET_S:-100000} ))
want() { [ -z "${INTEGRITY_ONLY:-}" ] || [[ " $INTEGRITY_ONLY " == *" $1 "* ]]; }
left() { echo $(( END - $(date +%s) )); }
cap() { local l; l=$(left); echo $(( $1 < l - 5 ? $1 : l - 5 )); }  # cap LIMIT: LIMIT cut to the budget
pack() { tar czf "$OUT/integrity.tgz.tmp" -C "$W" . 2>/dev/null && mv "$OUT/integrity.tgz.tmp" "$OUT/integrity.tgz"; }
enough() { [ "$(left)" -ge "$1" ] || { echo "=== skipped $2: $(left) s left of BUDGET_S"; return 1; }; }
step() {  # step NAME LIMIT_S ARGS...: run magpie, keep its output, print a summary
  local name=$1 limit; limit=$(cap "$2"); shift 2
  local t0=$(date +%s%N)
  timeout "$limit" "$BIN" "$@" -o "$R/$name" > "$W/logs/$name.txt" 2> "$W/logs/$name.err"
  local rc=$?
  printf "=== %s rc=%d (%d ms): magpie %s\n" "$name" "$rc" $(( ($(date +%s%N) - t0) / 1000000 )) "$*"
  [ $rc -le 1 ] || tail -8 "$W/logs/$name.err"
}
summary() { python3 "$SRC/tests/gpu/integrity_summary.py" "$R/$1"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
if want smoke; then
  step cuda_analyze 60 analyze -k examples/cuda/analyze.yaml --max-time 3
  summary cuda_analyze
  if ! grep -q '"source": *"cupti"' "$R"/cuda_analyze/*/*_report.json 2>/dev/null; then
    echo "=== GATE: the CUDA analyze has no CUPTI timing; later stages skipped"; tail -25 "$W/logs/cuda_analyze.err"
    pack; exit 0
  fi
  if [ -n "${SMOKE_AA:-}" ]; then step cuda_aa 60 compare -k examples/cuda/compare_aa.yaml --max-time 3; summary cuda_aa; fi
  if [ -n "${SMOKE_TRITON:-}" ]; then step triton 200 compare -k examples/triton/compare.yaml --max-time 3; summary triton; fi
  grep -h "magpie_cupti" "$W"/logs/*.err | sort | uniq -c | head -5
  pack
fi

if want adv && enough 40 adv; then
  if [ -z "${SUITE_BIN:-}" ] || [ ! -x "$SUITE_BIN" ]; then  # SUITE_BIN: the suite built beforehand (same nvcc)
    mkdir -p "$W/bin"
    nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude tests/gpu/adversarial_cuda/suite.cu -o "$W/bin/suite" || echo "suite: build failed"
    SUITE_BIN="$W/bin/suite"
  fi
  export SUITE_BIN
  for s in cuda torch; do
    enough 30 "adversarial $s" || continue
    ADV_TIME=${ADV_TIME:-2} timeout "$(cap "${ADV_LIMIT:-120}")" bash tests/gpu/adversarial_$s/run.sh "$BIN" "$R/adv_$s" \
      > "$W/logs/adv_$s.txt" 2>&1; echo "=== adversarial $s rc=$?"; tail -32 "$W/logs/adv_$s.txt"
    grep -h "rejected\|REJECT" "$R/adv_$s/compare.err" 2>/dev/null | head -40 > "$W/logs/adv_${s}_rejections.txt"
    pack
  done
  # A torch suite whose baseline got no CUPTI timing: the torch A/A types would only repeat that
  if [ -f "$R/adv_torch/compare.err" ] && ! python3 - "$R/adv_torch" <<'PY'
import glob, json, sys
reps = glob.glob(sys.argv[1] + "/res/compare_*/compare_report.json")
if not reps:
    sys.exit(0)  # no report (cut off by its limit): no evidence against torch
ks = json.load(open(reps[-1]))["results"]["kernel_results"]
sys.exit(0 if any((k.get("timing") or {}).get("source") == "cupti" for k in ks) else 1)
PY
  then
    echo "=== the torch suite has no CUPTI timing: A/A runs the CUDA types only"; export AA_TYPES="vadd16m vadd256k"
  fi
fi

if want aa && enough 40 aa; then
  [ -n "${SUITE_BIN:-}" ] && export SUITE_BIN
  AA_DEADLINE=$(( END - ${CVN_RESERVE_S:-0} - 10 )) timeout "$(cap 420)" bash tests/gpu/aa_h200.sh "$BIN" "$R/aa" > "$W/logs/aa.txt" 2>&1
  echo "=== aa rc=$?"; tail -45 "$W/logs/aa.txt"
  pack
fi

if want cvn && enough 40 cvn; then
  V="$W/cvn"; mkdir -p "$V"
  C=${CVN_BIN:-}  # CVN_BIN: tests/gpu/cupti_vs_ncu.cu built beforehand
  if [ -z "$C" ] || [ ! -x "$C" ]; then C="$V/cvn"; nvcc -O3 -arch=sm_90 tests/gpu/cupti_vs_ncu.cu -o "$C" || echo "cvn: build failed"; fi
  echo "=== events: condition median p10 p90 (us)"
  for c in warm read_flush read_flush_tlb read_flush_idle write_flush read_flush_spin; do timeout 20 "$C" $c 300; done
  echo "=== ncu gpu__time_duration of vadd (median of 5 launches, us)"
  for cn in ${CVN_NCU:-all:read_flush none:read_flush all:warm none:warm}; do  # cache-control:condition
    cc=${cn%%:*}; c=${cn#*:}
    enough 20 "ncu $cn" || break
    timeout "$(cap 40)" ncu --csv --metrics gpu__time_duration.sum --cache-control "$cc" --clock-control none -k vadd \
      "$C" "$c" 5 > "$V/ncu_${cc}_$c.csv" 2>"$V/ncu_${cc}_$c.err"
    python3 - "$V/ncu_${cc}_$c.csv" "$cc" "$c" <<'PY'
import csv, statistics, sys
v = []
for row in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')):
    if row[-3] == "gpu__time_duration.sum":
        x = float(row[-1].replace(",", ""))
        v.append(x / 1000 if row[-2] == "nsecond" else x * (1000 if row[-2] == "msecond" else 1))
print("ncu cache-control=%s cond=%s: median %.2f us over %d" % (sys.argv[2], sys.argv[3], statistics.median(v) if v else 0, len(v)))
PY
  done
  # magpie's CUPTI timing of the same kernel with the harness knobs varied
  E="$V/examples"; mkdir -p "$E"
  cp examples/cuda/vector_add.cu "$E/"
  for v in ${CVN_VARIANTS:-default:: hot:--hot noblock:: bigflush::}; do
    enough 25 "cvn magpie $v" || break
    name=${v%%:*}; flag=${v#*:}; flag=${flag%:}
    envl=""; extra=""
    [ "$name" = noblock ] && envl="  env: {MAGPIE_BENCH_BLOCKING_KERNEL: \"0\"}"
    [ "$name" = bigflush ] && extra=", flush_bytes: 503316480"
    cat > "$E/$name.yaml" <<Y
kernel:
  id: vector_add_$name
  type: cuda
  source_files: [vector_add.cu]
$envl
reference: {id: vector_add, type: cuda, source_files: [vector_add.cu]}
correctness: {trials: 5}
performance:
  backend: ncu
  timing: {warmup: 10, min_samples: 10, max_time_s: 2, cold: true$extra}
Y
    step cvn_$name 60 analyze -k "$E/$name.yaml" $flag
    summary cvn_$name
  done
  pack
fi

if want cost; then
  for b in "${OLD_BIN:-}" "$BIN"; do
    [ -n "$b" ] && [ -x "$b" ] || continue
    tag=$([ "$b" = "$BIN" ] && echo new || echo old)
    for ex in kernelbench cuda; do
      enough 30 "cost $tag $ex" || continue
      t0=$(date +%s%N)
      timeout "$(cap 200)" "$b" compare -k examples/$ex/compare.yaml --max-time 2 -o "$R/cost_${tag}_$ex" > "$W/logs/cost_${tag}_$ex.txt" 2>&1
      rc=$?
      printf "=== cost %s %s rc=%d wall %d ms\n" "$tag" "$ex" "$rc" $(( ($(date +%s%N) - t0) / 1000000 ))
    done
  done
fi
pack
exit 0
