#!/usr/bin/env bash
# Cost of the issue-35 integrity checks: wall time of `magpie compare` on the bundled host and
# python (numpy) examples with two magpie installs (a build dir each: magpie, include/, python/,
# data/, lib/), interleaved and alternating which goes first, ROUNDS rounds; prints the medians.
#   bench/integrity_cost.sh <before_dir> <after_dir> [rounds=5]
set -euo pipefail
before=$1 after=$2 rounds=${3:-5}
src="$(cd "$(dirname "$0")/.." && pwd)"
source "$src/tests/golden/py_harness_protocol/find_python.sh"
MAGPIE_PYTHON="${MAGPIE_PYTHON:-$(magpie_find_numpy_python)}"
export MAGPIE_PYTHON
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A times
for r in $(seq 1 "$rounds"); do
  for ex in host/compare.yaml pytorch/numpy_cpu/compare.yaml; do
    order="before after"
    [ $((r % 2)) -eq 0 ] && order="after before"
    for which in $order; do
      dir=$before
      [ "$which" = after ] && dir=$after
      t0=$(date +%s.%N)
      "$dir/magpie" compare -k "$src/examples/$ex" -o "$work/$which-$r" > "$work/out" 2>&1 || { echo "failed: $which $ex"; tail -5 "$work/out"; }
      t1=$(date +%s.%N)
      times[$which,$ex]+="$(echo "$t1 - $t0" | bc) "
      echo "round $r $which $ex $(echo "$t1 - $t0" | bc) s"
    done
  done
done
for ex in host/compare.yaml pytorch/numpy_cpu/compare.yaml; do
  for which in before after; do
    echo "$which $ex median $(printf '%s\n' ${times[$which,$ex]} | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}') s of: ${times[$which,$ex]}"
  done
done
