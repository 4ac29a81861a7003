#!/usr/bin/env bash
# Builds the YAML/JSON libFuzzer targets with clang (ASan + UBSan, every magpie module
# instrumented) and runs each for SECONDS. Seeds: the repository's YAML / JSON files.
# Usage: bench/fuzz/run.sh [seconds=600] [workdir=/tmp/magpie-fuzz] [targets="fuzz_config fuzz_json"]
# Prints libFuzzer's final stats per target; exits non-zero on a crash (reproducer in workdir).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
secs="${1:-600}" work="${2:-/tmp/magpie-fuzz}" targets="${3:-fuzz_config fuzz_json}"
command -v clang++ >/dev/null || { echo "clang++ not found (apt-get install clang)"; exit 77; }
san="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
cmake -S "$root" -B "$work/build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMAGPIE_FUZZ=ON -DMAGPIE_BUILD_TESTS=OFF -DMAGPIE_STATIC_RUNTIME=OFF -DCMAKE_CXX_FLAGS="$san" > "$work.cmake.log"
ninja -C "$work/build" $targets
mkdir -p "$work/corpus_config" "$work/corpus_json"
find "$root/examples" "$root/tests" -name '*.yaml' -size -64k -exec cp -t "$work/corpus_config" {} + 2>/dev/null || true
find "$root/data" "$root/tests" -name '*.json' -size -64k -exec cp -t "$work/corpus_json" {} + 2>/dev/null || true
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
  > "$work/corpus_json/mcp_session.jsonl"
printf '%s\n' '{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}' \
  > "$work/corpus_json/mcp_modern.jsonl"
rc=0
for t in $targets; do
  c=$work/corpus_${t#fuzz_}
  echo "== $t: ${secs} s, corpus $(ls "$c" | wc -l) seeds"
  (cd "$work" && "$work/build/bench/fuzz/$t" -max_total_time="$secs" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
     -print_final_stats=1 "$c" > "$work/$t.log" 2>&1) || rc=1
  grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)|ERROR|SUMMARY|Done [0-9]+ runs" "$work/$t.log" | tail -6
done
exit $rc
