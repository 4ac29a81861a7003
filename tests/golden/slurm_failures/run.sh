#!/usr/bin/env bash
# Jobs that do not end well are reported, not lost, on a real single-node Slurm: a compile
# error (job FAILED, the compiler's message in the row), a time limit (TIMEOUT), a job cancelled
# with 'magpie jobs cancel' (scancel: CANCELLED), and Ctrl-C of the submitting magpie (its
# unfinished jobs cancelled, the merged report still written, exit 130). Also a command job
# ('magpie jobs submit -- analyze ...', the path serving benchmarks take) collected into the
# results store. Skips (77) where the cluster cannot start.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
source "$MAGPIE_SOURCE_DIR/tests/slurm/golden_lib.sh"
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/batch_cases.sh"
slurm_up
EX="$MAGPIE_SOURCE_DIR/examples/host"
T="$GOLDEN_TMP"

# The failure batch (1-minute limit, from its YAML) and a command job, both without waiting.
"$MAGPIE_BIN" compare -k "$MAGPIE_SOURCE_DIR/tests/golden/slurm_failures/failures.yaml" --no-perf --seed 7 \
  -o "$T/fail" --no-wait > "$T/submit.txt" || fail "submit: $(cat "$T/submit.txt")"
grep -q "^Submitted batch " "$T/submit.txt" || fail "no 'Submitted batch' line"
FB=$(batch_dir "$T/fail")
"$MAGPIE_BIN" jobs submit -o "$T/cmd" --shared-dir "$T/cmd/batches" --time-limit 5 --no-wait -- \
  analyze -k "$EX/analyze.yaml" --no-perf > /dev/null || fail "jobs submit"
CB=$(batch_dir "$T/cmd")

# Ctrl-C of a waiting magpie: the running job is cancelled, the report still merged.
cat > "$T/int.yaml" <<YAML
kernels:
  - {id: vector_add, type: host, source_files: [$EX/vector_add.cpp]}
  - {id: sleeper, type: host, testcase_command: [sleep, "600"]}
YAML
"$MAGPIE_BIN" -e slurm compare -k "$T/int.yaml" --no-perf -o "$T/int" > "$T/int.txt" 2> "$T/int.err" &
pid=$!
for _ in $(seq 100); do IB=$(batch_dir "$T/int"); [ -n "$IB" ] && [ -f "$IB/batch.json" ] && break; sleep 0.2; done
wait_job_state "$IB" k01_sleeper RUNNING
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
[ "$rc" -eq 130 ] || fail "interrupted magpie exited $rc (want 130): $(tail -5 "$T/int.err")"
grep -q "cancelling the batch's unfinished jobs" "$T/int.err" || fail "no cancel message: $(cat "$T/int.err")"
check_json "$(workspace_of "$T/int" compare)/compare_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
states = {j["name"]: j["state"] for j in r["scheduler"]["jobs"]}
assert states == {"reference": "COMPLETED", "k01_sleeper": "CANCELLED"}, states
row = r["results"]["kernel_results"][1]
assert row["job_state"] == "CANCELLED" and row["outcome"] == "failed", row
assert "ended CANCELLED" in row["errors"][0], row["errors"]
assert r["results"]["comparison_metrics"]["correctness"] == [True, False]
PY
[ -z "$(squeue -h -t PD,R,CG -j "$(python3 -c "import json;print(json.load(open('$IB/batch.json'))['jobs'][1]['job_id'])")" 2>/dev/null)" ] \
  || fail "the interrupted batch's job is still queued"

# scancel one job of the failure batch while it runs.
wait_job_state "$FB" k03_cancelled RUNNING
"$MAGPIE_BIN" jobs cancel "$FB" k03_cancelled > /dev/null || fail "jobs cancel"
"$MAGPIE_BIN" jobs list -o "$T/fail" > "$T/list.txt" || fail "jobs list"
grep -q "$(basename "$FB")" "$T/list.txt" || fail "jobs list: $(cat "$T/list.txt")"

# Collect: waits for the time limit to hit the sleeper, then merges.
"$MAGPIE_BIN" jobs collect "$FB" > "$T/collect.txt" || fail "collect exited $?: $(tail "$T/collect.txt")"
grep -q "Correctness: 1/4 passed" "$T/collect.txt" || fail "collect console: $(cat "$T/collect.txt")"
"$MAGPIE_BIN" jobs status "$FB" --json > "$T/status.json" || fail "jobs status"
batch_failures_check "$(workspace_of "$T/fail" compare)/compare_report.json" "$T/status.json"
check_json "$(workspace_of "$T/fail" compare)/compare_report.json" "$T/status.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rows = {k["extra"]["kernel_id"]: k for k in r["results"]["kernel_results"]}
s = rows["sleeper"]
assert "slurm-" in s["errors"][0]  # names the job's log
PY
ws=$(workspace_of "$T/fail" compare)
[ -f "$ws/jobs/k01_broken/result.json" ] && ls "$ws"/jobs/k02_sleeper/slurm-*.out > /dev/null || fail "job files not collected"

# The command job: its workspace is registered in the store.
"$MAGPIE_BIN" jobs collect "$CB" > "$T/cmd.txt" || fail "command collect exited $?: $(cat "$T/cmd.txt")"
grep -q "^Workspace: .*/analyze_vector_add_unrolled_" "$T/cmd.txt" || fail "command workspace: $(cat "$T/cmd.txt")"
grep -q "^Results store: run " "$T/cmd.txt" || fail "not registered: $(cat "$T/cmd.txt")"
echo "ok: slurm failures reported"
