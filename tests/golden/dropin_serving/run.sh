#!/usr/bin/env bash
# Magpie drop-in, serving side, with the fake vllm/sglang (simulated server): Magpie-shaped
# benchmark YAMLs (every §6.1 field), GPU_MEMORY_UTILIZATION / MAX_MODEL_LEN passed through without
# duplicates, server_lifecycle reuse / mismatch / cleanup, the system profiler (a stand-in nsys,
# and a clear skip without one), Magpie-only flags accepted with warnings, and reward_eligible
# false for failed or interrupted runs.
set -euo pipefail
source "${MAGPIE_SOURCE_DIR:?set MAGPIE_SOURCE_DIR}/tests/golden/serve_common/common.sh"
export MAGPIE_SIM_ARGS="--decode-step-ms 1"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# 1. every Magpie benchmark field parses; env pass-through in the planned command lines
cat > "$TMP/full.yaml" <<YAML
benchmark:
  framework: VLLM
  model: sim-model
  precision: fp8
  run_mode: local
  run_kind: diagnostic
  envs:
    TP: 1
    CONC: 2
    ISL: 16
    OSL: 4
    RANDOM_RANGE_RATIO: 0.5
    NUM_PROMPTS: 4
    GPU_MEMORY_UTILIZATION: 0.8
    EXTRA_VLLM_ARGS: "--max-model-len 2048 --enforce-eager"
    VLLM_ROCM_USE_AITER: 1
    RUN_EVAL: "false"
  profiler:
    torch_profiler: {enabled: true, num_steps: 20, num_profiles: 1, interval_seconds: 200, start_seconds: 0,
                     capture_timeout_seconds: 600, flush_timeout_seconds: 120, detailed_annotations: false}
    system_profiler: {enabled: false, profile_args: []}
    tracelens: {enabled: false, analysis_mode: inference, analysis_stages: all, export_format: csv}
    gpu_monitor: {enabled: true, interval_sec: 2.0, device_id: null}
    targeted_trace: {enabled: false, backend: torch_profiler, targets: []}
  gap_analysis: {enabled: false, trace_start_pct: 0, trace_end_pct: 100, top_k: 20, min_duration_us: 0,
                 categories: [kernel, gpu], ignore_categories: [gpu_user_annotation], find_kernel_sources: false,
                 kernel_source_repos: null, auto_clone_repos: true, repos_base_dir: null}
  gpu_selection: {auto: true, min_free_memory_gb: 8.0, count: null, candidates: null}
  docker_image: null
  gpu_arch: null
  runner_type: mi300x
  benchmark_script: null
  timeout_seconds: 600
  inferencex_path: ""
  hf_cache_path: ~/.cache/huggingface
  ray_config: null
  server_lifecycle: null
  run_cmd: null
  lm_eval_runtime: null
  agentx: {enabled: false}
YAML
"$MAGPIE_BIN" benchmark -b "$TMP/full.yaml" --dry-run > "$TMP/full.json" 2> "$TMP/full.err" || fail "full: $(cat "$TMP/full.err")"
check_json "$TMP/full.json" '
s = r["server"]["server_command"]
assert s.count("--gpu-memory-utilization") == 1 and s[s.index("--gpu-memory-utilization") + 1] == "0.8", s
assert s.count("--max-model-len") == 1 and s[s.index("--max-model-len") + 1] == "2048", s
assert r["config"]["profiler"]["torch_profiler"]["trace_wait_s"] == 120
assert r["run_kind"] == "diagnostic"
'
grep -q "num_steps is accepted but not used" "$TMP/full.err" || fail "no num_steps warning: $(cat "$TMP/full.err")"
grep -q "benchmark.runner_type is a Magpie/InferenceX setting" "$TMP/full.err" || fail "no runner_type warning"
grep -q "benchmark.agentx is a Magpie/InferenceX setting" "$TMP/full.err" || fail "no agentx warning"
"$MAGPIE_BIN" benchmark sglang -m sim-model --run-mode local --dry-run > "$TMP/sg.json"
check_json "$TMP/sg.json" 'assert "--context-length" not in r["server"]["server_command"], r["server"]["server_command"]'

# 2. a real local run of a Magpie-shaped YAML; Magpie-only CLI flags are accepted with warnings
sed -e 's/torch_profiler: {enabled: true,/torch_profiler: {enabled: false,/' "$TMP/full.yaml" > "$TMP/run.yaml"
"$MAGPIE_BIN" benchmark -b "$TMP/run.yaml" --inferencex-path /opt/InferenceX --benchmark-script x.sh -o "$TMP/run" \
  > "$TMP/run.log" 2>&1 || fail "run: $(tail -20 "$TMP/run.log")"
ws=$(workspace_in "$TMP/run")
check_json "$ws/benchmark_report.json" '
assert r["success"] is True and r["throughput"]["completed_requests"] == 4, r["errors"]
assert r["reward_eligible"] is False and r["run_kind"] == "diagnostic"
assert any("--inferencex-path is accepted" in w for w in r["warnings"]), r["warnings"]
'
assert_no_orphans

# 3. server_lifecycle: start once, reuse, refuse a different server, clean up
life() {  # life NAME CLEANUP MODEL
  cat > "$TMP/$1.yaml" <<YAML
benchmark:
  framework: vllm
  model: $3
  run_mode: local
  envs: {PORT: $port, CONC: 2, ISL: 16, OSL: 4, NUM_PROMPTS: 4}
  profiler: {torch_profiler: {enabled: false}}
  server_lifecycle: {enabled: true, cleanup: $2, pid_dir: $TMP/state, server_ready_timeout_s: 120}
YAML
  "$MAGPIE_BIN" benchmark -b "$TMP/$1.yaml" -o "$TMP/$1" > "$TMP/$1.log" 2>&1
}
life first false sim-model || fail "first: $(tail -20 "$TMP/first.log")"
pid=$(cat "$TMP/state/vllm_$port.pid")
kill -0 "$pid" || fail "the server did not outlive its run"
check_json "$(workspace_in "$TMP/first")/benchmark_report.json" '
assert r["success"] is True and r["server"]["lifecycle"]["reused"] is False, r["server"]
assert "kept running" in r["server"]["exit"]
'
life second false sim-model || fail "second: $(tail -20 "$TMP/second.log")"
check_json "$(workspace_in "$TMP/second")/benchmark_report.json" '
assert r["success"] is True and r["server"]["lifecycle"]["reused"] is True, r["server"]
'
if life other false other-model; then fail "a server with other settings was reused or replaced without cleanup"; fi
check_json "$(workspace_in "$TMP/other")/benchmark_report.json" '
assert r["success"] is False and r["reward_eligible"] is False
assert any("started with other settings" in e for e in r["errors"]), r["errors"]
'
kill -0 "$pid" || fail "the mismatching run stopped the recorded server"
life last true sim-model || fail "last: $(tail -20 "$TMP/last.log")"
check_json "$(workspace_in "$TMP/last")/benchmark_report.json" '
assert r["server"]["lifecycle"]["reused"] is True and "server_lifecycle cleanup" in r["server"]["exit"], r["server"]
'
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null && [ "$(awk '{print $3}' /proc/$pid/stat)" != Z ]; then fail "cleanup left the server running"; fi
[ ! -e "$TMP/state/vllm_$port.pid" ] || fail "cleanup left the state files"

# 4. system profiler: a stand-in nsys wraps the local server; without nsys the run says why
mkdir -p "$TMP/nsys_bin"
cat > "$TMP/nsys_bin/nsys" <<'SH'
#!/usr/bin/env bash
# stand-in for Nsight Systems: `nsys profile -o OUT --force-overwrite true CMD...`
[ "$1" = profile ] || exit 2; shift
[ "$1" = -o ] || exit 2; out=$2; shift 2
[ "$1" = --force-overwrite ] || exit 2; shift 2
echo "fake nsys report" > "$out.nsys-rep"
exec "$@"
SH
chmod +x "$TMP/nsys_bin/nsys"
PATH="$TMP/nsys_bin:$PATH" "$MAGPIE_BIN" benchmark vllm -m sim-model --run-mode local --system-profiler --concurrency 2 \
  --input-len 16 --output-len 4 --num-prompts 4 -o "$TMP/nsys" > "$TMP/nsys.log" 2>&1 || fail "nsys: $(tail -20 "$TMP/nsys.log")"
ws=$(workspace_in "$TMP/nsys")
[ -f "$ws/system_profile/server.nsys-rep" ] || fail "no system profile report"
check_json "$ws/benchmark_report.json" '
assert r["files"]["system_profile"] == "system_profile/server.nsys-rep", r["files"]
assert r["server"]["launch_command"][1] == "profile" and r["run_kind"] == "diagnostic"
'
"$MAGPIE_BIN" benchmark vllm -m sim-model --run-mode local --system-profiler --concurrency 2 --input-len 16 \
  --output-len 4 --num-prompts 4 -o "$TMP/nonsys" > "$TMP/nonsys.log" 2>&1 || fail "no nsys: $(tail -20 "$TMP/nonsys.log")"
check_json "$(workspace_in "$TMP/nonsys")/benchmark_report.json" '
assert r["success"] is True
assert any("system profiler skipped: nsys (Nsight Systems) was not found" in w for w in r["warnings"]), r["warnings"]
'
assert_no_orphans

# 4b. a local framework that is not installed: the run fails with the reason (it used to crash)
set +e
PATH=/usr/bin:/bin "$MAGPIE_BIN" benchmark vllm -m sim-model --run-mode local -o "$TMP/novllm" > "$TMP/novllm.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "vllm missing: exit $rc: $(tail -5 "$TMP/novllm.log")"
grep -q "cannot start the server: command not found: vllm" "$TMP/novllm.log" || fail "no reason: $(cat "$TMP/novllm.log")"
[ ! -e "$TMP/novllm" ] || fail "vllm missing: the failed pre-flight wrote $TMP/novllm"

# 5. failed and interrupted runs are never reward-eligible (a refused connection fails the
# pre-flight: no report, no store row)
if "$MAGPIE_BIN" benchmark --base-url http://127.0.0.1:9 --served-model-name m --num-prompts 2 --run-kind measurement \
     -o "$TMP/refused" > "$TMP/refused.log" 2>&1; then fail "refused: exit 0"; fi
[ ! -e "$TMP/refused" ] || fail "refused: the failed pre-flight wrote $TMP/refused"
grep -q "Connection refused" "$TMP/refused.log" || fail "refused: $(cat "$TMP/refused.log")"
start_sim --decode-step-ms 200
"$MAGPIE_BIN" benchmark --base-url "$SIM_URL" --served-model-name sim --num-prompts 50 --max-concurrency 1 \
  --random-input-len 16 --random-output-len 64 --run-kind measurement -o "$TMP/intr" > "$TMP/intr.log" 2>&1 &
mp=$!
sleep 2
kill -INT "$mp"
wait "$mp" && fail "interrupted run: exit 0"
check_json "$(workspace_in "$TMP/intr")/benchmark_report.json" '
assert r["success"] is False and r["reward_eligible"] is False, (r["success"], r["reward_eligible"])
assert any("interrupted" in e for e in r["errors"]), r["errors"]
'
grep -q "Reward eligible: False" "$TMP/intr.log" || fail "summary says reward eligible"
echo "dropin_serving: ok"
