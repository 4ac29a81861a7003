#!/usr/bin/env bash
# Trace-reader benchmark (not a test): throughput and peak RSS of magpie's streaming trace
# engine on a large trace made by replicating the real H200 trace (gen_big_trace.py).
#
# Usage: bench/trace/run_bench.sh [--mb 520] [--runs 5] [--dir /tmp/magpie-trace-bench]
# Env:   MAGPIE_BIN (default: build/magpie next to this checkout)
#
# Measures, each run interleaved with its baseline, medians over --runs:
#   gap   `magpie trace gap` on the .json   (reader + Magpie's aggregation: the hot path)
#   gz    `magpie trace gap` on the .json.gz vs `zcat` of the same file
#   report `magpie trace report --no-html` on the .json (full model: linking, tree, perf
#          models, roofline): peak RSS vs file size
# MB/s = uncompressed JSON bytes / wall seconds (also per CPU second, user+sys, which the
# other load of a shared machine disturbs less). Peak RSS from /usr/bin/time (max RSS).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mb=520 runs=5 dir=/tmp/magpie-trace-bench
while [ $# -gt 0 ]; do
  case "$1" in
    --mb) mb="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
bin="${MAGPIE_BIN:-$root/build/magpie}"
[ -x "$bin" ] || { echo "magpie binary not found: $bin (set MAGPIE_BIN)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 needed to generate the trace" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time needed (apt-get install time)" >&2; exit 2; }
mkdir -p "$dir/plain" "$dir/gz" "$dir/out"
src="$root/examples/traces/llama_tiny-rank-0.pt.trace.json.gz"
json="$dir/plain/big-rank-0.pt.trace.json" gz="$dir/gz/big-rank-0.pt.trace.json.gz"
if [ ! -s "$json" ] || [ ! -s "$gz" ] || [ "$(stat -c %s "$json")" -lt $((mb * 1000000)) ]; then
  echo "generating ≥${mb} MB trace in $dir ..." >&2
  python3 "$here/gen_big_trace.py" "$src" "$json" "$mb" --gzip "$gz"
fi
json_bytes=$(stat -c %s "$json"); gz_bytes=$(stat -c %s "$gz")
cat "$json" > /dev/null; cat "$gz" > /dev/null   # warm the page cache

# run LABEL CMD... → appends "wall cpu rss_kb" to $dir/LABEL.txt
run() {
  local label="$1"; shift
  /usr/bin/time -f "%e %U %S %M" -o "$dir/time.txt" "$@" > /dev/null 2> "$dir/stderr.txt" || {
    echo "$label failed:"; cat "$dir/stderr.txt"; exit 1; }
  awk '{printf "%s %.3f %s\n", $1, $2 + $3, $4}' "$dir/time.txt" >> "$dir/$label.txt"
}
rm -f "$dir"/{gap,gz,zcat,report}.txt
for i in $(seq "$runs"); do
  run gap "$bin" -q trace gap "$dir/plain" -o "$dir/out"
  run zcat zcat "$gz"
  run gz "$bin" -q trace gap "$dir/gz" -o "$dir/out"
  run report "$bin" -q trace report "$json" -o "$dir/out/report" --no-html
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
col() { awk -v c="$2" '{print $c}' "$dir/$1.txt" | median; }
printf "machine: %s, %s cores, load %s\n" "$(uname -n)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf "trace: %.1f MB JSON (%.1f MB gzip), %d runs, medians\n\n" "$(echo "$json_bytes / 1000000" | bc -l)" \
  "$(echo "$gz_bytes / 1000000" | bc -l)" "$runs"
printf "%-8s %9s %10s %9s %12s %10s %10s\n" mode wall_s MB/s cpu_s MB/cpu_s rss_MB rss/file
for m in gap gz zcat report; do
  w=$(col $m 1); c=$(col $m 2); r=$(col $m 3)
  printf "%-8s %9.3f %10.0f %9.3f %12.0f %10.1f %10.3f\n" "$m" "$w" "$(echo "$json_bytes / 1000000 / $w" | bc -l)" "$c" \
    "$(echo "$json_bytes / 1000000 / $c" | bc -l)" "$(echo "$r / 1024" | bc -l)" "$(echo "$r * 1024 / $json_bytes" | bc -l)"
done
printf "\ngz / zcat speed (wall): %.2f\n" "$(echo "$(col zcat 1) / $(col gz 1)" | bc -l)"
