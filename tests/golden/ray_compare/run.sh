#!/usr/bin/env bash
# Compare and analyze batches through a real single-node Ray head (tests/ray/cluster.sh, the
# dashboard's Jobs REST API): the merged report has the local run's verdicts with the same seed;
# a kernel YAML with only a ray_config section runs on Ray (Magpie's rule) with its address,
# shared storage path and runtime_env.env_vars; an analyze batch with a reference; a timed
# batch timed together in one job; a serving benchmark with run_mode: ray (client only, against
# the simulator) collected into the results store. Skips (77) where the cluster cannot start.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
source "$MAGPIE_SOURCE_DIR/tests/ray/golden_lib.sh"
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/batch_cases.sh"
ray_up
EX="$MAGPIE_SOURCE_DIR/examples/host"
SAME="$MAGPIE_SOURCE_DIR/tests/golden/slurm_compare/same_verdicts.py"
T="$GOLDEN_TMP"

# 1. compare, no timing, fixed seed: local and Ray (-e ray, address from RAY_API_SERVER_ADDRESS)
#    give the same verdicts.
"$MAGPIE_BIN" compare -k "$EX/compare.yaml" --no-perf --seed 42 -o "$T/local" > /dev/null || fail "local compare"
"$MAGPIE_BIN" -e ray compare -k "$EX/compare.yaml" --no-perf --seed 42 -o "$T/ray" > "$T/ray.txt" 2> "$T/ray.err" \
  || fail "ray compare exited $?: $(tail -5 "$T/ray.err")"
grep -q "Correctness: 3/4 passed" "$T/ray.txt" || fail "ray console: $(cat "$T/ray.txt")"
grep -q "Ray jobs (batch " "$T/ray.txt" || fail "no Ray jobs table: $(cat "$T/ray.txt")"
python3 "$SAME" "$(workspace_of "$T/local" compare)/compare_report.json" \
  "$(workspace_of "$T/ray" compare)/compare_report.json" ray
check_json "$(workspace_of "$T/ray" compare)/compare_report.json" "$RAY_API_SERVER_ADDRESS" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["scheduler"]
assert s["environment"] == "ray" and s["ray_address"] == sys.argv[2], (s["environment"], s.get("ray_address"))
jobs = {j["name"]: j for j in s["jobs"]}
assert set(jobs) == {"reference", "k01_vector_add_unrolled", "k02_vector_add_twopass", "k03_vector_add_offbyone"}, jobs
assert jobs["reference"]["state"] == "COMPLETED" and jobs["k03_vector_add_offbyone"]["state"] == "FAILED"
assert jobs["k03_vector_add_offbyone"]["exit_code"] == 1 and jobs["k03_vector_add_offbyone"]["state_text"] == "FAILED"
assert all(j["source"] == "ray" and j["job_id"].startswith("magpie-batch_compare_") for j in jobs.values())
assert all(j["log"].endswith(".out") and "/ray-magpie-batch_compare_" in j["log"] for j in jobs.values())
assert s["timing_interleaved"] is False
PY
ws=$(workspace_of "$T/ray" compare)
ls "$ws"/jobs/reference/ray-*.out > /dev/null || fail "the Ray job logs were not collected"
grep -q "run-task" "$ws"/jobs/reference/ray-*.out || grep -q "Correctness" "$ws"/jobs/reference/ray-*.out \
  || fail "reference log: $(cat "$ws"/jobs/reference/ray-*.out)"

# 2. A kernel YAML with a ray_config section and no scheduler.environment runs on Ray (Magpie's
#    rule): its cluster_address, shared_storage_path and env_vars reach the jobs.
cat > "$T/rc.yaml" <<YAML
kernels:
  - {id: vector_add, type: host, source_files: [$EX/vector_add.cpp]}
  - {id: vector_add_unrolled, type: host, source_files: [$EX/vector_add_unrolled.cpp]}
ray_config:
  cluster_address: $RAY_API_SERVER_ADDRESS
  shared_storage_path: $T/shared
  env_vars: {MAGPIE_RAY_TEST_MARK: marked}
  metadata: {team: golden}
YAML
env -u RAY_API_SERVER_ADDRESS "$MAGPIE_BIN" compare -k "$T/rc.yaml" --no-perf --seed 3 -o "$T/rc" > "$T/rc.txt" 2>&1 \
  || fail "ray_config compare: $(tail -5 "$T/rc.txt")"
RB=$(ls -d "$T"/shared/batch_compare_* | tail -n 1)
[ -n "$RB" ] || fail "no batch under shared_storage_path"
check_json "$RB/batch.json" "$RAY_API_SERVER_ADDRESS" <<'PY'
import json, sys, urllib.request
b = json.load(open(sys.argv[1]))
assert b["engine"] == "ray" and b["engine_config"]["address"] == sys.argv[2]
for j in b["jobs"]:
    assert j["last"]["state"] == "COMPLETED", j
    # what the cluster recorded for the job: the runtime_env and metadata magpie posted
    d = json.load(urllib.request.urlopen(sys.argv[2] + "/api/jobs/" + j["job_id"], timeout=10))
    assert d["runtime_env"]["env_vars"]["MAGPIE_RAY_TEST_MARK"] == "marked", d["runtime_env"]
    assert d["metadata"]["team"] == "golden" and d["metadata"]["magpie_job"] == j["name"], d["metadata"]
    assert d["entrypoint"].startswith("cd ") and "timeout --kill-after=30 1800 /bin/bash" in d["entrypoint"], d["entrypoint"]
PY

# 3. analyze batch with a reference and timing per job: same outcomes, exit code 1 as locally.
batch_analyze_case ray "$T" ray

# 4. timed compare: the correct kernels are timed together in the timing job; verdicts valid.
batch_timed_compare_case ray "$T" > /dev/null
"$MAGPIE_BIN" jobs list -o "$T/timed" --json > "$T/list.json"
check_json "$T/list.json" <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))
assert len(l) == 1 and l[0]["engine"] == "ray" and l[0]["states"] == {"COMPLETED": 4, "FAILED": 1}, l
assert l[0]["status"] == "SUCCEEDED", l  # an incorrect kernel is an outcome, not a failed batch
PY

python3 "$MAGPIE_SOURCE_DIR/tests/golden/ray_compare/mcp_jobs.py" "$T/timed" "$(batch_dir "$T/timed")" \
  || fail "MCP job tools"
# The same through the official MCP Python SDK, which validates every structured result against
# its tool's outputSchema (tests/golden/mcp_sdk; skipped where the SDK cannot be installed).
if sdk_py=$(bash "$MAGPIE_SOURCE_DIR/tests/golden/mcp_sdk/sdk_venv.sh"); then
  MAGPIE_MCP_CLIENT=sdk "$sdk_py" "$MAGPIE_SOURCE_DIR/tests/golden/ray_compare/mcp_jobs.py" "$T/timed" \
    "$(batch_dir "$T/timed")" || fail "MCP job tools through the MCP SDK"
else
  echo "note: $sdk_py"
fi

# 5. A serving benchmark with run_mode: ray: one Ray job runs 'magpie benchmark ... --run-mode
#    local' (client only, against the simulator on this loopback); its workspace is registered.
SIM="$MAGPIE_BUILD_DIR/tests/sim/magpie_sim_server"
if [ -x "$SIM" ]; then
  "$SIM" --port-file "$T/sim.port" --decode-step-ms 1 --model sim > "$T/sim.log" 2>&1 &
  sim_pid=$!
  for _ in $(seq 100); do [ -s "$T/sim.port" ] && break; sleep 0.05; done
  cat > "$T/bench.yaml" <<YAML
benchmark:
  framework: vllm
  run_mode: ray
  base_url: http://127.0.0.1:$(cat "$T/sim.port")
  profiler: {torch_profiler: {enabled: false}}
  client: {random_input_len: 32, random_output_len: 8, num_prompts: 12, max_concurrency: 4}
  ray_config: {shared_storage_path: $T/bshared}
YAML
  "$MAGPIE_BIN" benchmark -b "$T/bench.yaml" -o "$T/bench" > "$T/bench.txt" 2>&1 || fail "run_mode ray benchmark: $(tail "$T/bench.txt")"
  kill "$sim_pid" 2>/dev/null || true
  grep -q "^Workspace: .*/benchmark_" "$T/bench.txt" || fail "benchmark workspace: $(cat "$T/bench.txt")"
  grep -q "^Results store: run " "$T/bench.txt" || fail "benchmark not registered: $(cat "$T/bench.txt")"
  bws=$(sed -n 's/^Workspace: //p' "$T/bench.txt" | head -n 1)
  check_json "$bws/benchmark_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["success"] is True and r["throughput"]["completed_requests"] == 12, r.get("errors")
PY
  check_json "$(ls -d "$T"/bshared/batch_command_* | tail -n 1)/batch.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
assert b["engine"] == "ray" and b["command"][0] == "benchmark" and b["command"][-2:] == ["--run-mode", "local"], b["command"]
assert b["jobs"][0]["ray_request"]["entrypoint_num_gpus"] == 0  # client only: no GPU reserved
PY
else
  echo "note: $SIM not built: run_mode ray benchmark case skipped" >&2
fi
echo "ok: ray compare/analyze/benchmark batches"
