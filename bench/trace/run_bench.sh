#!/usr/bin/env bash
# Trace-engine benchmark (not a test): throughput and peak RSS of `magpie trace report` and
# `magpie trace gap`, the new build against a previous one in the same run, on a large trace
# made by replicating the real H200 trace (gen_big_trace.py).
#
# Usage: bench/trace/run_bench.sh [--mb 520] [--runs 5] [--dir /tmp/magpie-trace-bench]
#                                 [--callgrind MB]
# Env:   MAGPIE_BIN (default: build/magpie next to this checkout)
#        MAGPIE_BIN_OLD (optional: the previous build; its rows are measured interleaved)
#        MAGPIE_DATA_DIR (default: data/ of this checkout: the GPU spec table for the roofline)
#
# Per binary, each run interleaved with the others, medians over --runs:
#   gap     `trace gap` on the .json   (reader + Magpie's aggregation)
#   gz      `trace gap` on the .json.gz (with `zcat` of the same file as the reference)
#   report  `trace report --no-html` on the .json (reader, model, linking, timeline, perf models,
#           roofline, kernel table, per-op-name view, stage split)
# MB/s = uncompressed JSON bytes / wall seconds, and per CPU second (user+sys), which the other
# load of a shared machine disturbs less. Peak RSS from /usr/bin/time.
# --callgrind MB: also count instructions (valgrind --tool=callgrind) of report and gap on an
# MB-sized trace, old and new: a measure that does not move with the machine's load.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mb=520 runs=5 dir=/tmp/magpie-trace-bench cg_mb=0
while [ $# -gt 0 ]; do
  case "$1" in
    --mb) mb="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --callgrind) cg_mb="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
bin="${MAGPIE_BIN:-$root/build/magpie}"
# Both builds read this checkout's GPU spec table, so the report includes the roofline wherever
# the binaries were copied to.
export MAGPIE_DATA_DIR="${MAGPIE_DATA_DIR:-$root/data}"
old="${MAGPIE_BIN_OLD:-}"
[ -x "$bin" ] || { echo "magpie binary not found: $bin (set MAGPIE_BIN)" >&2; exit 2; }
[ -z "$old" ] || [ -x "$old" ] || { echo "MAGPIE_BIN_OLD not executable: $old" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 needed to generate the trace" >&2; exit 2; }
# GNU time where installed, else the same four figures from getrusage (measure.py).
if [ -x /usr/bin/time ]; then timed() { /usr/bin/time -f "%e %U %S %M" -o "$@"; }
else timed() { python3 "$here/measure.py" "$@"; }; fi
calc() { awk "BEGIN { printf \"%.9g\", $* }"; }  # arithmetic without bc
mkdir -p "$dir/plain" "$dir/gz" "$dir/out"
src="$root/examples/traces/llama_tiny-rank-0.pt.trace.json.gz"
json="$dir/plain/big-rank-0.pt.trace.json" gz="$dir/gz/big-rank-0.pt.trace.json.gz"
if [ ! -s "$json" ] || [ ! -s "$gz" ] || [ "$(stat -c %s "$json")" -lt $((mb * 1000000)) ]; then
  echo "generating ≥${mb} MB trace in $dir ..." >&2
  python3 "$here/gen_big_trace.py" "$src" "$json" "$mb" --gzip "$gz"
fi
json_bytes=$(stat -c %s "$json"); gz_bytes=$(stat -c %s "$gz")
cat "$json" > /dev/null; cat "$gz" > /dev/null   # warm the page cache

# run LABEL CMD... → appends "wall cpu rss_kb" to $dir/LABEL.txt (exit 3, partial input, is a failure here)
run() {
  local label="$1"; shift
  timed "$dir/time.txt" "$@" > /dev/null 2> "$dir/stderr.txt" || {
    echo "$label failed:"; cat "$dir/stderr.txt"; exit 1; }
  awk '{printf "%s %.3f %s\n", $1, $2 + $3, $4}' "$dir/time.txt" >> "$dir/$label.txt"
}
bins=(new) ; [ -n "$old" ] && bins=(old new)
binary() { if [ "$1" = old ]; then echo "$old"; else echo "$bin"; fi; }
rm -f "$dir"/*.txt
for i in $(seq "$runs"); do
  run zcat zcat "$gz"
  for b in "${bins[@]}"; do
    x="$(binary "$b")"
    run "gap_$b" "$x" -q trace gap "$dir/plain" -o "$dir/out/$b"
    run "gz_$b" "$x" -q trace gap "$dir/gz" -o "$dir/out/$b"
    run "report_$b" "$x" -q trace report "$json" -o "$dir/out/$b/report" --no-html
  done
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
col() { awk -v c="$2" '{print $c}' "$dir/$1.txt" | median; }
printf "machine: %s, %s cores, load %s (shared: read the per-CPU-second column and the ratios)\n" "$(uname -n)" \
  "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf "trace: %.1f MB JSON (%.1f MB gzip), %d runs, medians\n\n" "$(calc "$json_bytes / 1000000")" \
  "$(calc "$gz_bytes / 1000000")" "$runs"
printf "%-12s %9s %10s %9s %12s %10s %10s\n" mode wall_s MB/s cpu_s MB/cpu_s rss_MB rss/file
labels=(zcat)
for m in gap gz report; do for b in "${bins[@]}"; do labels+=("${m}_$b"); done; done
for m in "${labels[@]}"; do
  w=$(col "$m" 1); c=$(col "$m" 2); r=$(col "$m" 3)
  printf "%-12s %9.3f %10.0f %9.3f %12.0f %10.1f %10.3f\n" "$m" "$w" "$(calc "$json_bytes / 1000000 / $w")" "$c" \
    "$(calc "$json_bytes / 1000000 / $c")" "$(calc "$r / 1024")" "$(calc "$r * 1024 / $json_bytes")"
done
if [ -n "$old" ]; then
  printf "\nnew / old speed (CPU seconds): gap %.2fx, gz %.2fx, report %.2fx; report RSS new / old %.2f\n" \
    "$(calc "$(col gap_old 2) / $(col gap_new 2)")" "$(calc "$(col gz_old 2) / $(col gz_new 2)")" \
    "$(calc "$(col report_old 2) / $(col report_new 2)")" "$(calc "$(col report_new 3) / $(col report_old 3)")"
fi
printf "gz / zcat speed (wall): %.2f\n" "$(calc "$(col zcat 1) / $(col gz_new 1)")"

if [ "$cg_mb" != 0 ]; then
  command -v valgrind >/dev/null || { echo "valgrind not installed: no instruction counts" >&2; exit 0; }
  cg="$dir/cg/small-rank-0.pt.trace.json"
  mkdir -p "$dir/cg"
  [ -s "$cg" ] || python3 "$here/gen_big_trace.py" "$src" "$cg" "$cg_mb" > /dev/null
  printf "\ninstructions (callgrind, %.1f MB trace):\n" "$(calc "$(stat -c %s "$cg") / 1000000")"
  for b in "${bins[@]}"; do
    x="$(binary "$b")"
    for m in report gap; do
      if [ "$m" = report ]; then args=(trace report "$cg" -o "$dir/out/cg_$b" --no-html); else args=(trace gap "$dir/cg" -o "$dir/out/cg_$b"); fi
      valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" "$x" -q "${args[@]}" > /dev/null 2> "$dir/cg.log" || true
      ir=$(grep -m1 -o "Collected : [0-9]*" "$dir/cg.log" | awk '{print $3}')
      printf "  %-4s %-7s %15s Ir  (%.2f instructions per JSON byte)\n" "$b" "$m" "$ir" "$(calc "$ir / $(stat -c %s "$cg")")"
    done
  done
fi
