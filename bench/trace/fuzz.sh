#!/usr/bin/env bash
# Builds the trace-reader libFuzzer target with clang (ASan + UBSan) and runs it.
# Usage: [PREBUILT=dir] bench/trace/fuzz.sh [seconds=600] [workdir=/tmp/magpie-fuzz-trace]
#   PREBUILT=dir runs dir/fuzz_trace_reader instead of building it; a corpus already in
#   workdir/corpus is kept, so a second call continues the first one.
# Prints libFuzzer's final stats; exits non-zero on a crash (the reproducer is left in workdir).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
secs="${1:-600}" work="${2:-/tmp/magpie-fuzz-trace}"
mkdir -p "$work/corpus"
fuzzer="${PREBUILT:-$work}/fuzz_trace_reader"
if [[ -z "${PREBUILT:-}" ]]; then
command -v clang++ >/dev/null || { echo "clang++ not found (apt-get install clang)"; exit 77; }
mkdir -p "$work/corpus" "$work/obj"
srcs=("$here/fuzz_trace_reader.cpp" "$root"/src/trace/{reader,byte_source,json_scan,util,annotations,perf_model}.cpp
      "$root"/src/core/{strings,status,json,progress,log,subprocess,env,fs}.cpp)
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -I"$root/src" -DRAPIDJSON_HAS_STDSTRING=1)
objs=()
for s in "${srcs[@]}"; do
  o="$work/obj/$(basename "$s" .cpp).o"
  if [ ! -e "$o" ] || [ "$s" -nt "$o" ]; then clang++ "${flags[@]}" -c "$s" -o "$o"; fi
  objs+=("$o")
done
clang++ "${flags[@]}" "${objs[@]}" -lz -lpthread -o "$work/fuzz_trace_reader"
fi
# Seeds: the synthetic fixtures and the head of the real trace.
cp "$root"/tests/fixtures/traces/*.json "$root"/tests/fixtures/traces/*.json.gz "$work/corpus/" 2>/dev/null || true
cp "$root"/tests/fixtures/traces/two_ranks/*.json "$work/corpus/"
(zcat "$root/examples/traces/llama_tiny-rank-0.pt.trace.json.gz" | head -c 20000 > "$work/corpus/real_head.json") || true
cd "$work"
"$fuzzer" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 corpus 2>&1 | tail -25
