#!/usr/bin/env bash
# magpie benchmark vllm --run-mode local through the fake `vllm` (simulator): launch, readiness,
# deliberate torch profiling (vLLM >= 0.15 flags), traces into torch_trace/, kernel summary and
# gap analysis by the trace engine, server group stopped (no orphans), logs and provenance.
set -euo pipefail
source "${MAGPIE_SOURCE_DIR:?set MAGPIE_SOURCE_DIR}/tests/golden/serve_common/common.sh"
export MAGPIE_SIM_ARGS="--decode-step-ms 2"
out="$TMP/out1"
"$MAGPIE_BIN" benchmark vllm -m sim-model --run-mode local --torch-profiler --concurrency 4 --input-len 64 \
  --output-len 8 --num-prompts 16 -o "$out" > "$TMP/stdout1" 2> "$TMP/stderr1" || fail "run failed: $(tail -20 "$TMP/stderr1")"
ws=$(workspace_in "$out")
case "$ws" in */benchmark_vllm_*) ;; *) fail "workspace $ws";; esac
assert_no_orphans
ls "$ws"/torch_trace/*.pt.trace.json.gz > /dev/null || fail "no trace in torch_trace/"
grep -q "magpie-sim: serving model sim-model" "$ws/server.log" || fail "server.log lacks the server output"
grep -q "^# magpie: vllm serve sim-model" "$ws/server.log" || fail "server.log lacks the command line"
grep -q "Top bottleneck kernels" "$TMP/stdout1" || fail "summary without kernels"
check_json "$ws/benchmark_report.json" '
assert r["success"] is True, r["errors"]
assert r["profiling_enabled"] is True and r["run_kind"] == "diagnostic" and r["reward_eligible"] is False
assert r["throughput"]["completed_requests"] == 16
ks = r["kernel_summary"]; assert ks and ks[0]["name"] == "sim_gemm_bf16_128x128_kernel", ks
assert abs(sum(k["percent"] for k in ks) - 100) < 1e-6
assert r["top_bottlenecks"][0] == ks[0]["name"]
s = r["server"]
assert s["profiler_args"] == "flags" and "--profiler-config.torch_profiler_dir" in s["server_command"]
assert s["env"]["VLLM_TORCH_PROFILER_DIR"].endswith("/torch_trace")
assert "stopped by magpie" in s["exit"] and s["ready_after_s"] >= 0
assert r["files"]["torch_trace"] == "torch_trace"
'
# YAML: gap analysis on, old vLLM (env-only profiler), input SHA-256, separate profiling pass
cat > "$TMP/bench.yaml" <<YAML
benchmark:
  framework: vllm
  model: sim-model
  run_mode: local
  envs:
    CONC: 2
    ISL: 32
    OSL: 4
    NUM_PROMPTS: 6
  profiler:
    torch_profiler:
      enabled: true
      profile_prompts: 3
    tracelens:
      enabled: true
      analysis_stages: [decode]
  gap_analysis:
    enabled: true
    top_k: 3
  client:
    num_warmups: 0
  server:
    stop_grace_s: 2
YAML
out="$TMP/out2"
MAGPIE_SIM_VLLM_VERSION=0.10.1 "$MAGPIE_BIN" benchmark -b "$TMP/bench.yaml" -o "$out" > "$TMP/stdout2" 2>&1 \
  || fail "yaml run failed: $(tail -20 "$TMP/stdout2")"
ws=$(workspace_in "$out")
sha=$(sha256sum "$TMP/bench.yaml" | cut -d' ' -f1)
[ -s "$ws/gap_analysis/gap_analysis.csv" ] || fail "no gap_analysis.csv"
cmp -s "$TMP/bench.yaml" "$ws/input_config.yaml" || fail "input config not kept"
check_json "$ws/benchmark_report.json" "
assert r['success'] is True, r['errors']
assert r['provenance']['input_config_sha256'] == '$sha'
assert r['server']['profiler_args'] == 'env' and '--profiler-config.profiler' not in r['server']['server_command']
g = r['gap_analysis']; assert g and len(g['top_kernels']) == 3 and g['config']['top_k'] == 3, g
assert r['throughput']['completed_requests'] == 6
assert r['profile_pass']['requests'] == 3 and r['profile_pass']['completed'] == 3
t = r['tracelens_analysis']; assert t and t['enabled'] is True and t['analysis_stages'] == ['decode'], t
"
assert_no_orphans
echo "serve_vllm_local: ok"
