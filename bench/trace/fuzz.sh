#!/usr/bin/env bash
# Builds the trace-reader libFuzzer target with clang (ASan + UBSan) and runs it.
# Usage: [PREBUILT=dir] bench/trace/fuzz.sh [seconds=600] [workdir=/tmp/magpie-fuzz-trace]
#   PREBUILT=dir runs dir/fuzz_trace_reader instead of building it; a corpus already in
#   workdir/corpus is kept, so a second call continues the first one.
# Prints libFuzzer's final stats (full log: workdir/fuzz_trace_reader.log); exits non-zero on a
# crash (the reproducer is left in workdir: add it to tests/regress/parsers/trace/ before fixing).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
secs="${1:-600}" work="${2:-/tmp/magpie-fuzz-trace}"
mkdir -p "$work/corpus"
fuzzer="${PREBUILT:-}/fuzz_trace_reader"
if [[ -z "${PREBUILT:-}" ]]; then  # the same clang ASan+UBSan build as bench/fuzz/run.sh
  command -v clang++ >/dev/null || { echo "clang++ not found (apt-get install clang)"; exit 77; }
  cmake -S "$root" -B "$work/build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DMAGPIE_FUZZ=ON -DMAGPIE_BUILD_TESTS=OFF -DMAGPIE_STATIC_RUNTIME=OFF \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" > "$work/cmake.log"
  ninja -C "$work/build" ${JOBS:+-j"$JOBS"} fuzz_trace_reader
  fuzzer="$work/build/bench/fuzz/fuzz_trace_reader"
fi
# Seeds: the synthetic fixtures and the head of the real trace.
cp "$root"/tests/fixtures/traces/*.json "$root"/tests/fixtures/traces/*.json.gz "$work/corpus/" 2>/dev/null || true
cp "$root"/tests/fixtures/traces/two_ranks/*.json "$root"/tests/regress/parsers/trace/* "$work/corpus/"
(zcat "$root/examples/traces/llama_tiny-rank-0.pt.trace.json.gz" | head -c 20000 > "$work/corpus/real_head.json") || true
cd "$work"
rc=0
"$fuzzer" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 corpus > fuzz_trace_reader.log 2>&1 || rc=$?
grep -E "^(stat::|#[0-9]+[[:space:]]+(INITED|DONE))|ERROR|SUMMARY|Done [0-9]+ runs|Test unit written" fuzz_trace_reader.log | tail -12
exit $rc
