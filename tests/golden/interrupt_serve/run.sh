#!/usr/bin/env bash
# Ctrl-C (SIGINT) to `magpie benchmark` with a locally launched server whose engine worker runs
# in a session of its own (setsid): the worker is ended with the server, the partial reports
# are written, the workspace is marked INCOMPLETE and the results store records it interrupted.
set -euo pipefail
source "${MAGPIE_SOURCE_DIR:?set MAGPIE_SOURCE_DIR}/tests/golden/serve_common/common.sh"
export MAGPIE_SIM_ARGS="--decode-step-ms 200" MAGPIE_SIM_SETSID_WORKER=1
out="$TMP/res"
"$MAGPIE_BIN" benchmark sglang -m sim-model --run-mode local --concurrency 1 --input-len 16 --output-len 64 \
  --num-prompts 200 -o "$out" > "$TMP/b.out" 2> "$TMP/b.err" &
pid=$!
for _ in $(seq 300); do [ -s "$MAGPIE_SIM_PID_DIR/worker.pid" ] && grep -q "server ready" "$TMP/b.err" && break; sleep 0.1; done
[ -s "$MAGPIE_SIM_PID_DIR/worker.pid" ] || fail "the server never started: $(tail -5 "$TMP/b.err")"
worker=$(cat "$MAGPIE_SIM_PID_DIR/worker.pid")
[ "$(ps -o sid= -p "$worker" | tr -d ' ')" = "$worker" ] || fail "the worker is not in a session of its own"
sleep 1
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
assert_no_orphans
ws=$(workspace_in "$out")
[ -f "$ws/INCOMPLETE" ] || fail "no INCOMPLETE marker in $ws (exit $rc): $(tail -5 "$TMP/b.err")"
grep -q "interrupted" "$ws/INCOMPLETE" || fail "marker: $(cat "$ws/INCOMPLETE")"
grep -qF "$ws" "$TMP/b.err" || fail "stderr does not name the workspace"
[ -f "$ws/benchmark_report.json" ] || fail "no partial report"
"$MAGPIE_BIN" results list -o "$out" --json > "$TMP/list.json"
check_json "$TMP/list.json" "
rows = [x for x in r if x['workspace'] == '$ws']
assert len(rows) == 1 and rows[0]['state'] == 'interrupted' and rows[0]['success'] is False, r
"
echo "interrupt_serve: ok"
