#!/usr/bin/env bash
# The serving client against hostile servers on loopback (hostile_server.py) and the error
# paths of `magpie benchmark`:
#   - a 1 GiB `data:` line under prlimit --as=1 GiB: that request fails (the event cap, and with
#     the caps lifted std::bad_alloc), the others are counted, the report is written, exit 3;
#   - an endless fast stream: every request ends at its chunk cap (or --max-response-bytes), max
#     RSS < 64 MiB; an endless slow stream ends at the default per-request timeout derived from
#     the workload (60 s + 0.5 s x 1 max_tokens + 0.002 s x 1 prompt token = 60.5 s), RSS < 64 MiB;
#   - an event nested a million arrays deep: refused, no stack overflow;
#   - a /v1/models that never answers: --timeout and --request-timeout bound the lookup;
#   - each error: the message on stderr naming the URL / file / flag, nothing on stdout, and for
#     a failed pre-flight nothing written (no workspace, no results store);
#   - a plain run: exit 0 and no empty torch_trace/.
# ~65 s wall, most of it the slow stream's default timeout (run in the background meanwhile).
set -euo pipefail
source "${MAGPIE_SOURCE_DIR:?set MAGPIE_SOURCE_DIR}/tests/golden/serve_common/common.sh"
here="$MAGPIE_SOURCE_DIR/tests/golden/serve_hostile"
command -v prlimit > /dev/null || { echo "skip: prlimit (util-linux) not found"; exit 77; }
GIB=1073741824
RSS_LIMIT_KB=65536

# start_hostile NAME ARGS...: a hostile server; sets URL.
start_hostile() {
  local name=$1
  shift
  python3 "$here/hostile_server.py" --port-file "$TMP/$name.port" --log "$TMP/$name.log" "$@" 2> "$TMP/$name.srv.err" &
  OWN_PIDS+=($!)
  for _ in $(seq 200); do [ -s "$TMP/$name.port" ] && break; sleep 0.05; done
  [ -s "$TMP/$name.port" ] || fail "hostile server $name did not start: $(cat "$TMP/$name.srv.err")"
  URL="http://127.0.0.1:$(cat "$TMP/$name.port")"
}
# bench NAME ARGS...: magpie benchmark (through rss_run.py) with stdout/stderr in $TMP/NAME.{out,err}; sets RC.
bench() {
  local name=$1
  shift
  RC=0
  python3 "$here/rss_run.py" "$TMP/$name.rss" "$@" > "$TMP/$name.out" 2> "$TMP/$name.err" || RC=$?
}
rss_kb() { cut -d' ' -f1 "$TMP/$1.rss"; }
wall_s() { cut -d' ' -f2 "$TMP/$1.rss"; }
# expect_stderr_only NAME RC NEEDLE: exit RC, NEEDLE on stderr, stdout empty, nothing under $TMP/NAME.o.
expect_stderr_only() {
  [ "$RC" -eq "$2" ] || fail "$1: exit $RC, want $2: $(cat "$TMP/$1.err")"
  grep -qF -- "$3" "$TMP/$1.err" || fail "$1: stderr lacks '$3': $(cat "$TMP/$1.err")"
  [ ! -s "$TMP/$1.out" ] || fail "$1: stdout is not empty: $(cat "$TMP/$1.out")"
  [ ! -e "$TMP/$1.o" ] || fail "$1: a failed pre-flight wrote $(find "$TMP/$1.o" | head -5)"
}

# --- endless slow stream, default flags: started first, checked last (it takes the 60.5 s default timeout)
start_hostile slow --mode endless_slow
python3 "$here/rss_run.py" "$TMP/slow.rss" "$MAGPIE_BIN" benchmark --base-url "$URL" --random-input-len 1 \
  --random-output-len 1 --num-prompts 2 -o "$TMP/slow.o" > "$TMP/slow.out" 2> "$TMP/slow.err" &
slow_job=$!
OWN_PIDS+=($slow_job)

# --- 1 GiB line under a 1 GiB address-space limit, default flags: the event cap fails request 2
start_hostile huge --mode huge_line --victim 2
bench huge prlimit --as=$GIB "$MAGPIE_BIN" benchmark --base-url "$URL" --random-input-len 8 --random-output-len 4 \
  --num-prompts 6 --max-concurrency 2 -o "$TMP/huge.o"
[ "$RC" -eq 3 ] || fail "huge line: exit $RC, want 3 (partial): $(tail -5 "$TMP/huge.err")"
ws=$(workspace_in "$TMP/huge.o")
check_json "$ws/serving_result.json" '
assert r["completed"] == 5 and r["failed"] == 1, (r["completed"], r["failed"])
err = r["errors"][2]
assert "an SSE line or event exceeded 4196352 bytes (--max-event-bytes)" in err, r["errors"]
'
check_json "$ws/benchmark_report.json" 'assert r["success"] is True and r["throughput"]["completed_requests"] == 5'
grep -q "Status: SUCCESS" "$TMP/huge.out" || fail "huge line: no summary on stdout"
grep -q "1 of 6 measured requests failed; first error: an SSE line or event exceeded" "$TMP/huge.err" || fail "huge: stderr"
[ "$(rss_kb huge)" -lt $RSS_LIMIT_KB ] || fail "huge line: max RSS $(rss_kb huge) KiB"
echo "huge line, default caps: exit 3, 5 of 6 completed, max RSS $(rss_kb huge) KiB, $(wall_s huge) s"

# --- the same with every cap lifted: the allocation fails (std::bad_alloc), only that request is lost
bench huge0 prlimit --as=$GIB "$MAGPIE_BIN" benchmark --base-url "$URL" --random-input-len 8 --random-output-len 4 \
  --num-prompts 6 --max-concurrency 2 --max-event-bytes 0 --max-response-bytes 0 -o "$TMP/huge0.o"
[ "$RC" -eq 3 ] || fail "huge line, no caps: exit $RC, want 3: $(tail -5 "$TMP/huge0.err")"
check_json "$(workspace_in "$TMP/huge0.o")/serving_result.json" '
assert r["completed"] == 5 and r["failed"] == 1, (r["completed"], r["failed"])
assert r["errors"][2].startswith("out of memory in the client (std::bad_alloc) while reading the response"), r["errors"]
'
echo "huge line, no caps, 1 GiB address space: exit 3, 5 of 6 completed ($(wall_s huge0) s)"

# --- endless fast stream, default flags: each request stops at its chunk cap (8 x 4 + 256)
start_hostile fast --mode endless_fast
bench fast "$MAGPIE_BIN" benchmark --base-url "$URL" --random-input-len 8 --random-output-len 4 --num-prompts 4 \
  --max-concurrency 4 -o "$TMP/fast.o"
[ "$RC" -eq 1 ] || fail "endless fast: exit $RC, want 1 (nothing completed): $(tail -5 "$TMP/fast.err")"
check_json "$(workspace_in "$TMP/fast.o")/serving_result.json" '
assert r["completed"] == 0 and len(r["errors"]) == 4
assert all("the server sent more than 288 choices chunks" in e for e in r["errors"]), r["errors"]
'
grep -q "no request completed" "$TMP/fast.err" || fail "endless fast: stderr: $(cat "$TMP/fast.err")"
[ "$(rss_kb fast)" -lt $RSS_LIMIT_KB ] || fail "endless fast: max RSS $(rss_kb fast) KiB"
# and with a byte cap below the chunk cap
bench fastb "$MAGPIE_BIN" benchmark --base-url "$URL" --random-input-len 8 --random-output-len 1000 --num-prompts 2 \
  --max-response-bytes 100000 -o "$TMP/fastb.o"
[ "$RC" -eq 1 ] || fail "endless fast, byte cap: exit $RC"
check_json "$(workspace_in "$TMP/fastb.o")/serving_result.json" '
assert all("the response exceeded 100000 bytes (--max-response-bytes)" in e for e in r["errors"]), r["errors"]
'
echo "endless fast stream: chunk cap and byte cap end each request; max RSS $(rss_kb fast) KiB"

# --- an event nested a million arrays deep: refused without recursion (it used to overflow the stack)
start_hostile deep --mode deep_json
bench deep "$MAGPIE_BIN" benchmark --base-url "$URL" --random-input-len 8 --random-output-len 4 --num-prompts 2 -o "$TMP/deep.o"
[ "$RC" -eq 1 ] || fail "deep JSON: exit $RC, want 1: $(tail -5 "$TMP/deep.err")"
check_json "$(workspace_in "$TMP/deep.o")/serving_result.json" '
assert all("JSON nested deeper than 64 levels" in e for e in r["errors"]), r["errors"]
'
echo "deeply nested event: refused, exit 1"

# --- /v1/models never answers: the lookup is bounded by --timeout, then by --request-timeout
start_hostile models --mode models_hang
bench models1 "$MAGPIE_BIN" benchmark --base-url "$URL" --num-prompts 2 --timeout 3 -o "$TMP/models1.o"
expect_stderr_only models1 1 "GET $URL/v1/models: no answer within 3.0 s"
bench models2 "$MAGPIE_BIN" benchmark --base-url "$URL" --num-prompts 2 --request-timeout 1.5 -o "$TMP/models2.o"
expect_stderr_only models2 1 "GET $URL/v1/models: no answer within 1.5 s"
python3 -c "import sys; w = float(sys.argv[1]); assert w < 8, w" "$(wall_s models1)" || fail "models lookup took $(wall_s models1) s with --timeout 3"
echo "models lookup: --timeout 3 ended it after $(wall_s models1) s, --request-timeout 1.5 after $(wall_s models2) s"

# --- errors: stderr only, and a failed pre-flight writes nothing
bench refused "$MAGPIE_BIN" benchmark --base-url http://127.0.0.1:1 --served-model-name m --num-prompts 2 -o "$TMP/refused.o"
expect_stderr_only refused 1 "the server at --base-url is not reachable: http://127.0.0.1:1: Connection refused"
bench refused2 "$MAGPIE_BIN" benchmark --base-url http://127.0.0.1:1 --num-prompts 2 -o "$TMP/refused2.o"
expect_stderr_only refused2 1 "GET http://127.0.0.1:1/v1/models: Connection refused"
start_hostile ok --mode normal
ok_url=$URL
bench nodata "$MAGPIE_BIN" benchmark --base-url "$ok_url" --dataset-name custom --dataset-path "$TMP/missing.jsonl" -o "$TMP/nodata.o"
expect_stderr_only nodata 1 "--dataset-path $TMP/missing.jsonl: No such file or directory"
printf 'benchmark:\n  base_url: %s\n  client: {dataset_name: sharegpt, dataset_path: %s}\n' "$ok_url" "$TMP/missing.json" > "$TMP/b.yaml"
bench nodata2 "$MAGPIE_BIN" benchmark -b "$TMP/b.yaml" -o "$TMP/nodata2.o"
expect_stderr_only nodata2 1 "(or benchmark.client.dataset_path in $TMP/b.yaml)"
touch "$TMP/afile"
bench outfile "$MAGPIE_BIN" benchmark --base-url "$ok_url" --num-prompts 2 -o "$TMP/afile/sub"
expect_stderr_only outfile 2 "--output-dir $TMP/afile/sub: $TMP/afile is not a directory"
bench nocfg "$MAGPIE_BIN" benchmark -b "$TMP/missing.yaml" -o "$TMP/nocfg.o"
[ "$RC" -ne 0 ] && grep -qF "$TMP/missing.yaml" "$TMP/nocfg.err" && [ ! -s "$TMP/nocfg.out" ] || fail "missing config: $(cat "$TMP/nocfg.err")"
bench nolaunch env PATH=/usr/bin:/bin "$MAGPIE_BIN" benchmark vllm -m m --run-mode local -o "$TMP/nolaunch.o"
expect_stderr_only nolaunch 1 "cannot start the server: command not found: vllm"
bench notrace "$MAGPIE_BIN" benchmark --trace-dir "$TMP/no_traces" -o "$TMP/notrace.o"
expect_stderr_only notrace 1 "Error: trace directory not found: $TMP/no_traces"
mkdir -p "$TMP/cpu_only"
echo '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::add","ts":0,"dur":5,"pid":1,"tid":1}]}' > "$TMP/cpu_only/r-rank-0.pt.trace.json"
bench nokernel "$MAGPIE_BIN" benchmark --trace-dir "$TMP/cpu_only" -o "$TMP/nokernel.o"
[ "$RC" -eq 1 ] && grep -q "no kernel events found" "$TMP/nokernel.err" && [ ! -s "$TMP/nokernel.out" ] \
  || fail "trace without kernels: exit $RC, stdout $(cat "$TMP/nokernel.out"), stderr $(cat "$TMP/nokernel.err")"
echo "errors: on stderr, stdout empty, failed pre-flights wrote nothing"

# --- a plain run: exit 0, no empty torch_trace/ without profiling, no error on stderr
bench ok "$MAGPIE_BIN" benchmark --base-url "$ok_url" --random-input-len 8 --random-output-len 4 --num-prompts 5 -o "$TMP/ok.o"
[ "$RC" -eq 0 ] || fail "plain run: exit $RC: $(cat "$TMP/ok.err")"
ws=$(workspace_in "$TMP/ok.o")
[ ! -e "$ws/torch_trace" ] || fail "an empty torch_trace/ was created without profiling"
! grep -q " ERROR " "$TMP/ok.err" || fail "plain run: $(cat "$TMP/ok.err")"
check_json "$ws/serving_result.json" 'assert r["completed"] == 5 and r["generated_texts"] == [""] * 5'

# --- the slow stream: both requests timed out at the derived default
wait "$slow_job" || true
[ -s "$TMP/slow.rss" ] || fail "slow run: no exit code: $(tail -5 "$TMP/slow.err")"
RC=$(cut -d' ' -f3 "$TMP/slow.rss")
[ "$RC" -eq 1 ] || fail "endless slow: exit $RC: $(tail -5 "$TMP/slow.err")"
check_json "$(workspace_in "$TMP/slow.o")/serving_result.json" '
assert r["completed"] == 0 and len(r["errors"]) == 2
assert all(e.startswith("timed out after 60.5 s (the default per-request timeout: 60 s + 0.5 s x max_tokens + 0.002 s x prompt tokens") for e in r["errors"]), r["errors"]
'
python3 -c "import sys; w = float(sys.argv[1]); assert 60 <= w < 75, w" "$(wall_s slow)" || fail "slow run took $(wall_s slow) s"
[ "$(rss_kb slow)" -lt $RSS_LIMIT_KB ] || fail "endless slow: max RSS $(rss_kb slow) KiB"
echo "endless slow stream: ended at the default timeout after $(wall_s slow) s, max RSS $(rss_kb slow) KiB"
echo "serve_hostile: ok"
