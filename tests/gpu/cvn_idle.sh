#!/usr/bin/env bash
# CUPTI vs ncu, part 2 (issue 36): the 16M fp32 add after a read flush, with a host gap between
# flush and launch (magpie's flush -> sample round trip), a spin kernel of 20 / 200 us, CUPTI
# activity off / on; then ncu's gpu__time_duration for the same kernel. Prints one table.
# Usage (repo root): bash tests/gpu/cvn_idle.sh OUT_DIR   (exit 77 without a GPU)
set -uo pipefail
command -v nvidia-smi >/dev/null || { echo "skip: no nvidia-smi (no NVIDIA GPU)"; exit 77; }
OUTD=${1:?output dir}; mkdir -p "$OUTD"
B="$OUTD/cvn_idle"
nvcc -O3 -std=c++17 -arch=sm_90 tests/gpu/cvn_idle.cu -lcupti -o "$B" || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.draw --format=csv | tee "$OUTD/smi.txt"
echo "gap_us spin_us cupti event_us cupti_us sm_mhz" | tee "$OUTD/table.txt"
for cupti in none conc; do
  for gap in -1 0 20 100 500 2000; do
    for spin in 20 200; do
      "$B" "$gap" "$spin" "$cupti" 300 | tee -a "$OUTD/table.txt"
    done
  done
done
# ncu: flush+invalidate before the replay (cache-control all), clocks as they are (none) and locked (base)
for cc in none base; do
  ncu --clock-control "$cc" --cache-control all -k regex:vadd -c 30 --metrics gpu__time_duration.sum \
      --csv "$B" -1 20 none 30 > "$OUTD/ncu_$cc.csv" 2> "$OUTD/ncu_$cc.err"
  python3 - "$OUTD/ncu_$cc.csv" "$cc" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
hdr = rows[0]; i = hdr.index("Metric Value"); u = hdr.index("Metric Unit")
vals = []
for r in rows[1:]:
    v = float(r[i].replace(",", "")); unit = r[u]
    scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
    if unit not in scale: sys.exit("unknown ncu unit %r" % unit)
    vals.append(v * scale[unit])
print("ncu clock-control=%s: n=%d median %.2f us (p10 %.2f, p90 %.2f)" % (sys.argv[2], len(vals),
      statistics.median(vals), sorted(vals)[len(vals)//10], sorted(vals)[len(vals)*9//10]))
PY
done | tee -a "$OUTD/table.txt"
