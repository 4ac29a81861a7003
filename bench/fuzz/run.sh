#!/usr/bin/env bash
# Builds the YAML/JSON/CSV libFuzzer targets with clang (ASan + UBSan, every magpie module
# instrumented) and runs each for SECONDS, one after another. Corpora: bench/fuzz/seeds/<t>
# (anchors, aliases, merge keys, multi-documents, quoting, MCP sessions, spec tables, CSV
# quoting), the regression corpus tests/regress/parsers/<t>, generated depth/size attacks
# (nesting just past each bound and 100,000 deep, huge scalars, alias bombs) and the
# repository's own YAML/JSON files; dictionaries bench/fuzz/<yaml|json|csv>.dict.
# Usage: [JOBS=N] [PARALLEL=1] [PREBUILT=dir] bench/fuzz/run.sh [seconds=600] [workdir=/tmp/magpie-fuzz] [targets="fuzz_config fuzz_json fuzz_csv"]
#   PARALLEL=1 runs the targets at the same time (one core each); PREBUILT=dir takes the fuzzer
#   binaries from dir instead of building them (e.g. built here, run on a machine without clang).
#   A corpus already in workdir/corpus_<t> is kept, so a second call continues the first one.
# Prints libFuzzer's final stats per target (execs/s, cov, ft); exits non-zero on a finding
# (the reproducer is left in workdir: add it to tests/regress/parsers/<t>/ before fixing).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
secs="${1:-600}" work="${2:-/tmp/magpie-fuzz}" targets="${3:-fuzz_config fuzz_json fuzz_csv}"
bin="${PREBUILT:-$work/build/bench/fuzz}"
if [[ -z "${PREBUILT:-}" ]]; then
command -v clang++ >/dev/null || { echo "clang++ not found (apt-get install clang)"; exit 77; }
san="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
mkdir -p "$work"
cmake -S "$root" -B "$work/build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMAGPIE_FUZZ=ON -DMAGPIE_BUILD_TESTS=OFF -DMAGPIE_STATIC_RUNTIME=OFF -DCMAKE_CXX_FLAGS="$san" > "$work.cmake.log"
ninja -C "$work/build" ${JOBS:+-j"$JOBS"} $targets
fi
for t in config json csv; do
  mkdir -p "$work/corpus_$t"
  cp -t "$work/corpus_$t" "$root"/bench/fuzz/seeds/$t/* "$root"/tests/regress/parsers/$t/*
done
find "$root/examples" "$root/tests" -name '*.yaml' -size -64k -exec cp -t "$work/corpus_config" {} + 2>/dev/null || true
find "$root/data" "$root/tests" -name '*.json' -size -64k -exec cp -t "$work/corpus_json" {} + 2>/dev/null || true
python3 - "$work" <<'PY'
import sys
w = sys.argv[1]
def put(t, name, text): open(f"{w}/corpus_{t}/gen_{name}", "w").write(text)
for n in (129, 1000, 100000):   # YAML bound is 128 levels
    put("config", f"flow_{n}.yaml", "k: " + "[" * n + "]" * n + "\n")
    put("config", f"map_{n}.yaml", "k: " + "{a: " * n + "1" + "}" * n + "\n")
put("config", "block_200.yaml", "".join(" " * i + "k:\n" for i in range(200)))
put("config", "alias_chain.yaml", "".join(f"a{i}: &a{i} [*a{i-1}, *a{i-1}]\n" if i else "a0: &a0 x\n" for i in range(40)))
put("config", "huge_scalar.yaml", "kernel:\n  id: " + "x" * 200000 + "\n")
put("config", "huge_quoted.yaml", 'kernel:\n  id: "' + "y" * 200000 + '"\n')
for n in (513, 100000):         # JSON bound is 512 levels (128 for MCP messages)
    put("json", f"array_{n}.json", "[" * n + "]" * n)
    put("json", f"mcp_{n}.jsonl", '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":' + "[" * n + "]" * n + "}}\n")
put("json", "huge_string.json", '["' + "z" * 200000 + '"]')
put("csv", "many_rows.csv", "a,b\n" * 50000)
PY
run_one() {  # target -> log in $work/$t.log; returns libFuzzer's status
  local t=$1 c=$work/corpus_${1#fuzz_} d=$root/bench/fuzz/${1#fuzz_}.dict
  [[ $t == fuzz_config ]] && d=$root/bench/fuzz/yaml.dict
  echo "== $t: ${secs} s, corpus $(ls "$c" | wc -l) inputs, dict $(basename "$d")"
  (cd "$work" && "$bin/$t" -max_total_time="$secs" -max_len=262144 -timeout=10 -rss_limit_mb=2048 \
     -dict="$d" -print_final_stats=1 "$c" > "$work/$t.log" 2>&1)
}
summary() { echo "== $1"; grep -E "^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb|#[0-9]+[[:space:]]+DONE)|ERROR|SUMMARY|Done [0-9]+ runs" "$work/$1.log" | tail -6; }
rc=0
if [[ -n "${PARALLEL:-}" ]]; then
  pids=()
  for t in $targets; do run_one "$t" & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  for t in $targets; do summary "$t"; done
else
  for t in $targets; do run_one "$t" || rc=1; summary "$t"; done
fi
exit $rc
