#!/usr/bin/env bash
# Jobs that do not end well are reported, not lost, on a real single-node Ray head: a wrong
# cluster address (clear error, nothing written), a compile error (job FAILED, the compiler's
# message in the row), a time limit (TIMEOUT), a job cancelled with 'magpie jobs cancel' (Ray
# stop: CANCELLED), Ctrl-C of the submitting magpie (its unfinished jobs stopped, the jobs that
# were waiting never submitted, the merged report still written, exit 130), a command job
# ('magpie -e ray jobs submit -- analyze ...') collected into the results store, and the
# dashboard going down under a submitted batch (clear error; collect merges what is on disk).
# Skips (77) where the cluster cannot start.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
source "$MAGPIE_SOURCE_DIR/tests/ray/golden_lib.sh"
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/batch_cases.sh"
ray_up
EX="$MAGPIE_SOURCE_DIR/examples/host"
T="$GOLDEN_TMP"

# A wrong address: the error names it, and no batch directory is left behind.
rc=0
"$MAGPIE_BIN" -e ray compare -k "$EX/compare.yaml" --no-perf --ray-address http://127.0.0.1:9 -o "$T/bad" \
  > "$T/bad.txt" 2> "$T/bad.err" || rc=$?
[ "$rc" -eq 1 ] || fail "wrong address exited $rc: $(cat "$T/bad.err")"
grep -q "the Ray dashboard did not answer: GET http://127.0.0.1:9/api/version" "$T/bad.err" || fail "error text: $(cat "$T/bad.err")"
[ ! -e "$T/bad/batches" ] || fail "a batch directory was written for an unreachable cluster: $(ls -R "$T/bad")"

# The failure batch (45-second limit, from its YAML) and a command job, both without waiting.
"$MAGPIE_BIN" compare -k "$MAGPIE_SOURCE_DIR/tests/golden/ray_failures/failures.yaml" --no-perf --seed 7 \
  -o "$T/fail" --no-wait > "$T/submit.txt" || fail "submit: $(cat "$T/submit.txt")"
grep -q "^Submitted batch " "$T/submit.txt" || fail "no 'Submitted batch' line"
grep -q "3 job(s) start after others" "$T/submit.txt" || fail "deferred jobs not announced: $(cat "$T/submit.txt")"
FB=$(batch_dir "$T/fail")
"$MAGPIE_BIN" -e ray jobs submit -o "$T/cmd" --shared-dir "$T/cmd/batches" --time-limit 5 --no-wait -- \
  analyze -k "$EX/analyze.yaml" --no-perf > /dev/null || fail "jobs submit"
CB=$(batch_dir "$T/cmd")

# Ctrl-C of a waiting magpie: the running reference is stopped, the sleeper (waiting for it)
# is never submitted, the report is still merged.
cat > "$T/int.yaml" <<YAML
kernels:
  - {id: vector_add, type: host, testcase_command: [sleep, "600"]}
  - {id: sleeper, type: host, testcase_command: [sleep, "600"]}
YAML
"$MAGPIE_BIN" -e ray compare -k "$T/int.yaml" --no-perf -o "$T/int" > "$T/int.txt" 2> "$T/int.err" &
pid=$!
for _ in $(seq 100); do IB=$(batch_dir "$T/int"); [ -n "$IB" ] && [ -f "$IB/batch.json" ] && break; sleep 0.2; done
wait_job_state "$IB" reference RUNNING
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
[ "$rc" -eq 130 ] || fail "interrupted magpie exited $rc (want 130): $(tail -5 "$T/int.err")"
grep -q "cancelling the batch's unfinished jobs" "$T/int.err" || fail "no cancel message: $(cat "$T/int.err")"
check_json "$(workspace_of "$T/int" compare)/compare_report.json" "$RAY_API_SERVER_ADDRESS" <<'PY'
import json, sys, urllib.request
r = json.load(open(sys.argv[1]))
jobs = {j["name"]: j for j in r["scheduler"]["jobs"]}
states = {n: j["state"] for n, j in jobs.items()}
assert states == {"reference": "CANCELLED", "k01_sleeper": "CANCELLED"}, states
assert jobs["reference"]["state_text"] == "STOPPED" and jobs["k01_sleeper"]["job_id"] == ""
assert jobs["k01_sleeper"]["submit_error"] == "cancelled before it was submitted"
row = r["results"]["kernel_results"][1]
assert row["outcome"] == "failed" and "was not submitted" in row["errors"][0], row["errors"]
assert r["results"]["comparison_metrics"]["correctness"] == [False, False]
d = json.load(urllib.request.urlopen(sys.argv[2] + "/api/jobs/" + jobs["reference"]["job_id"], timeout=10))
assert d["status"] == "STOPPED", d["status"]  # the cluster agrees: nothing left running
PY

# Stop one job of the failure batch while it runs (each 'jobs status' round submits the
# kernel jobs once the reference has ended).
wait_job_state "$FB" k03_cancelled RUNNING
"$MAGPIE_BIN" jobs cancel "$FB" k03_cancelled > /dev/null || fail "jobs cancel"
"$MAGPIE_BIN" jobs list -o "$T/fail" > "$T/list.txt" || fail "jobs list"
grep -q "$(basename "$FB") *ray" "$T/list.txt" || fail "jobs list: $(cat "$T/list.txt")"

# Collect: waits for the time limit to hit the sleeper, then merges.
"$MAGPIE_BIN" jobs collect "$FB" > "$T/collect.txt" 2> "$T/collect.err" || fail "collect exited $?: $(tail "$T/collect.err")"
grep -q "Correctness: 1/4 passed" "$T/collect.txt" || fail "collect console: $(cat "$T/collect.txt")"
"$MAGPIE_BIN" jobs status "$FB" --json > "$T/status.json" || fail "jobs status"
batch_failures_check "$(workspace_of "$T/fail" compare)/compare_report.json" "$T/status.json"
check_json "$(workspace_of "$T/fail" compare)/compare_report.json" "$T/status.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rows = {k["extra"]["kernel_id"]: k for k in r["results"]["kernel_results"]}
s = rows["sleeper"]
assert json.load(open(sys.argv[2]))["engine"] == "ray"
jobs = {j["name"]: j for j in r["scheduler"]["jobs"]}
assert jobs["k02_sleeper"]["exit_code"] == 124 and jobs["k03_cancelled"]["state_text"] == "STOPPED"
assert "ray job magpie-batch_compare_" in s["errors"][0] and "/ray-magpie-" in s["errors"][0], s["errors"]
PY
ws=$(workspace_of "$T/fail" compare)
[ -f "$ws/jobs/k01_broken/result.json" ] && ls "$ws"/jobs/k02_sleeper/ray-*.out > /dev/null || fail "job files not collected"
grep -q "this_is_not_declared" "$ws"/jobs/k01_broken/ray-*.out || fail "the Ray log of the broken job lacks the compiler message"

# The command job: its workspace is registered in the store.
"$MAGPIE_BIN" jobs collect "$CB" > "$T/cmd.txt" 2>&1 || fail "command collect exited $?: $(cat "$T/cmd.txt")"
grep -q "^Workspace: .*/analyze_vector_add_unrolled_" "$T/cmd.txt" || fail "command workspace: $(cat "$T/cmd.txt")"
grep -q "^Results store: run " "$T/cmd.txt" || fail "not registered: $(cat "$T/cmd.txt")"

# The dashboard goes down under a submitted batch: status fails clearly, nothing is lost
# (batch.json intact; collect --no-wait merges the last recorded states).
cat > "$T/down.yaml" <<YAML
kernels:
  - {id: vector_add, type: host, testcase_command: [sleep, "600"]}
YAML
"$MAGPIE_BIN" -e ray analyze -k "$T/down.yaml" --no-perf -o "$T/down" --no-wait > /dev/null || fail "down submit"
DB=$(batch_dir "$T/down")
wait_job_state "$DB" k00_vector_add RUNNING
ray_down
rc=0; "$MAGPIE_BIN" jobs status "$DB" > "$T/down.txt" 2> "$T/down.err" || rc=$?
[ "$rc" -eq 1 ] || fail "jobs status with the dashboard down exited $rc"
grep -q "the Ray dashboard did not answer: GET $RAY_API_SERVER_ADDRESS/api/version" "$T/down.err" || fail "down error: $(cat "$T/down.err")"
"$MAGPIE_BIN" jobs collect "$DB" --no-wait > "$T/dcollect.txt" 2> "$T/dcollect.err" || true
grep -q "merging the last recorded job states" "$T/dcollect.err" || fail "collect without the dashboard: $(cat "$T/dcollect.err")"
check_json "$(workspace_of "$T/down" analyze)/analyze_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["scheduler"]
assert s["complete"] is False and s["jobs"][0]["state"] == "RUNNING", s["jobs"][0]
assert "was still RUNNING when the batch was collected" in r["results"][0]["errors"][0], r["results"][0]["errors"]
PY
echo "ok: ray failures reported"
