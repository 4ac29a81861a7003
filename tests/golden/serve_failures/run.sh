#!/usr/bin/env bash
# Failure handling of the orchestrated benchmark: a server that never becomes ready, one that
# exits at startup, one that dies mid-run, one that ignores SIGTERM. Each: exit 1, a clear
# error in the report, partial results kept, no orphan processes.
set -euo pipefail
source "${MAGPIE_SOURCE_DIR:?set MAGPIE_SOURCE_DIR}/tests/golden/serve_common/common.sh"
run() {  # run NAME EXTRA-SIM-ARGS MAGPIE-ARGS...
  local name=$1 sim_args=$2; shift 2
  MAGPIE_SIM_ARGS="$sim_args" "$MAGPIE_BIN" benchmark vllm -m sim-model --run-mode local --concurrency 2 \
    --input-len 16 --output-len 8 -o "$TMP/$name" "$@" > "$TMP/$name.log" 2>&1
}
# never ready
start=$(date +%s)
if run never "--never-ready" --ready-timeout 3 --num-prompts 4; then fail "never-ready: exit 0"; fi
[ $(( $(date +%s) - start )) -lt 30 ] || fail "never-ready took too long"
ws=$(workspace_in "$TMP/never")
check_json "$ws/benchmark_report.json" '
assert r["success"] is False
assert any("not ready within 3 s" in e and "/health HTTP 503" in e for e in r["errors"]), r["errors"]
assert r["throughput"] is None
'
grep -q "Status: FAILED" "$TMP/never.log" || fail "never-ready: summary"
assert_no_orphans
# exits at startup
if run crash "--no-such-flag" --num-prompts 4; then fail "crash: exit 0"; fi
check_json "$(workspace_in "$TMP/crash")/benchmark_report.json" '
assert any("exited before it was ready" in e and "exit code 2" in e and "no-such-flag" in e for e in r["errors"]), r["errors"]
'
assert_no_orphans
# dies mid-run: partial results kept
if run dies "--decode-step-ms 5 --die-after-requests 6 --die-delay-ms 20" --num-prompts 20 --num-warmups 0; then fail "dies: exit 0"; fi
ws=$(workspace_in "$TMP/dies")
check_json "$ws/benchmark_report.json" '
assert r["success"] is False
assert any("server exited during the benchmark (exit code 3)" in e for e in r["errors"]), r["errors"]
t = r["throughput"]; assert t["completed_requests"] >= 1 and t["failed_requests"] >= 1, t
assert t["completed_requests"] + t["failed_requests"] == 20
'
check_json "$ws/serving_result.json" '
assert any(e.startswith("not sent:") or "stream aborted" in e or "connect to" in e for e in r["errors"]), r["errors"]
'
grep -q "simulated crash" "$ws/server.log" || fail "dies: server.log"
assert_no_orphans
# ignores SIGTERM: the group gets SIGKILL after the grace period
cat > "$TMP/stubborn.yaml" <<YAML
benchmark:
  framework: vllm
  model: sim-model
  run_mode: local
  envs: {CONC: 2, ISL: 16, OSL: 4, NUM_PROMPTS: 4}
  profiler: {torch_profiler: {enabled: false}}
  server: {stop_grace_s: 1}
YAML
MAGPIE_SIM_ARGS="--ignore-sigterm --decode-step-ms 1" "$MAGPIE_BIN" benchmark -b "$TMP/stubborn.yaml" -o "$TMP/stubborn" \
  > "$TMP/stubborn.log" 2>&1 || fail "stubborn: $(tail -20 "$TMP/stubborn.log")"
check_json "$(workspace_in "$TMP/stubborn")/benchmark_report.json" '
assert r["success"] is True and "signal 9" in r["server"]["exit"], r["server"]["exit"]
'
assert_no_orphans
echo "serve_failures: ok"
