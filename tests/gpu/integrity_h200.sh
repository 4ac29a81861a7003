#!/usr/bin/env bash
# Issue 19 on the H200 (tests/gpu): integrity checks through the real binary on CUDA, triton and
# pytorch kernels; CUPTI vs ncu investigation; adversarial suites; A/A and 3%-slower runs; the
# cost benchmark. Stages (INTEGRITY_ONLY="smoke cvn ..." runs a subset, default all):
#   smoke  analyze/compare of the CUDA and triton examples (CUPTI channel, checks, verdicts)
#   cvn    CUPTI vs ncu: tests/gpu/cupti_vs_ncu.cu under five pre-conditions, ncu, magpie variants
#   adv    adversarial suites (tests/gpu/adversarial_cuda, tests/gpu/adversarial_torch)
#   aa     A/A pairs over four problem types, and a 3% slower variant
#   cost   examples/kernelbench and examples/cuda compare wall times (OLD_BIN: the binary before)
# Usage (repo root): bash tests/gpu/integrity_h200.sh BUILD_DIR   (BUILD_DIR/magpie, lib/)
# Writes logs and reports under $OUT; exits 77 without an NVIDIA GPU.
set -uo pipefail
command -v nvidia-smi >/dev/null || { echo "skip: no nvidia-smi (no NVIDIA GPU)"; exit 77; }
BUILD=${1:-${MAGPIE_BUILD_DIR:-build}}
BIN="$(cd "$BUILD" && pwd)/magpie"
SRC="$(pwd)"
OUT=${OUT:-$(mktemp -d)}
R="$OUT/results"
mkdir -p "$R" "$OUT/logs"
export MAGPIE_NO_PROGRESS=1 PYTHONUNBUFFERED=1 MAGPIE_HOME="$SRC" MAGPIE_DATA_DIR="$SRC/data"
want() { [ -z "${INTEGRITY_ONLY:-}" ] || [[ " $INTEGRITY_ONLY " == *" $1 "* ]]; }
step() {  # step NAME LIMIT_S ARGS...: run magpie, keep its output, print a summary
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s%N)
  timeout "$limit" "$BIN" "$@" -o "$R/$name" > "$OUT/logs/$name.txt" 2> "$OUT/logs/$name.err"
  local rc=$?
  printf "=== %s rc=%d (%d ms): magpie %s\n" "$name" "$rc" $(( ($(date +%s%N) - t0) / 1000000 )) "$*"
  [ $rc -le 1 ] || tail -8 "$OUT/logs/$name.err"
}
summary() { python3 "$SRC/tests/gpu/integrity_summary.py" "$R/$1"; }

if want smoke; then
  step cuda_analyze 120 analyze -k examples/cuda/analyze.yaml --max-time 3
  summary cuda_analyze
  step cuda_aa 120 compare -k examples/cuda/compare_aa.yaml --max-time 3
  summary cuda_aa
  step triton 200 compare -k examples/triton/compare.yaml --max-time 3
  summary triton
  grep -h "magpie_cupti" "$OUT"/logs/*.err | sort | uniq -c | head -5
fi

if want cvn; then
  W="$OUT/cvn"; mkdir -p "$W"
  nvcc -O3 -arch=sm_90 tests/gpu/cupti_vs_ncu.cu -o "$W/cvn" || echo "cvn: build failed"
  echo "=== events: condition median p10 p90 (us)"
  for c in warm read_flush read_flush_idle write_flush read_flush_spin; do "$W/cvn" $c 300; done
  echo "=== ncu gpu__time_duration of vadd (median of 5 launches, us)"
  for cc in all none; do
    for c in read_flush warm; do
      ncu --csv --metrics gpu__time_duration.sum --cache-control $cc --clock-control none -k vadd \
        "$W/cvn" $c 5 > "$W/ncu_${cc}_$c.csv" 2>/dev/null
      python3 - "$W/ncu_${cc}_$c.csv" "$cc" "$c" <<'PY'
import csv, statistics, sys
v = []
for row in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')):
    if row[-3] == "gpu__time_duration.sum":
        x = float(row[-1].replace(",", ""))
        v.append(x / 1000 if row[-2] == "nsecond" else x * (1000 if row[-2] == "msecond" else 1))
print("ncu cache-control=%s cond=%s: median %.2f us over %d" % (sys.argv[2], sys.argv[3], statistics.median(v) if v else 0, len(v)))
PY
    done
  done
  # magpie's CUPTI timing of the same kernel with the harness knobs varied
  E="$W/examples"; mkdir -p "$E"
  cp examples/cuda/vector_add.cu "$E/"
  for v in default:: hot:--hot noblock:: bigflush::; do
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
correctness: {trials: 3}
performance:
  backend: ncu
  timing: {warmup: 10, min_samples: 10, max_time_s: 2, cold: true$extra}
Y
    step cvn_$name 120 analyze -k "$E/$name.yaml" $flag
    summary cvn_$name
  done
fi

if want adv; then
  for s in cuda torch; do
    [ -x tests/gpu/adversarial_$s/run.sh ] && timeout 300 bash tests/gpu/adversarial_$s/run.sh "$BIN" "$R/adv_$s" \
      > "$OUT/logs/adv_$s.txt" 2>&1; echo "=== adversarial $s rc=$?"; tail -40 "$OUT/logs/adv_$s.txt"
  done
fi

if want aa; then
  timeout 420 bash tests/gpu/aa_h200.sh "$BIN" "$R/aa" > "$OUT/logs/aa.txt" 2>&1; echo "=== aa rc=$?"; tail -45 "$OUT/logs/aa.txt"
fi

if want cost; then
  for b in "${OLD_BIN:-}" "$BIN"; do
    [ -n "$b" ] && [ -x "$b" ] || continue
    tag=$([ "$b" = "$BIN" ] && echo new || echo old)
    for ex in kernelbench cuda; do
      t0=$(date +%s%N)
      timeout 200 "$b" compare -k examples/$ex/compare.yaml --max-time 2 -o "$R/cost_${tag}_$ex" > "$OUT/logs/cost_${tag}_$ex.txt" 2>&1
      rc=$?
      printf "=== cost %s %s rc=%d wall %d ms\n" "$tag" "$ex" "$rc" $(( ($(date +%s%N) - t0) / 1000000 ))
    done
  done
fi
tar czf "$OUT/reports.tgz" -C "$R" . 2>/dev/null
exit 0
