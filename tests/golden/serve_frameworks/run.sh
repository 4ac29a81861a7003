#!/usr/bin/env bash
# SGLang and ATOM launched locally through fake python entry points (PYTHONPATH), with their
# profiler directories; --dry-run command lines for local and docker runs of all three.
set -euo pipefail
source "${MAGPIE_SOURCE_DIR:?set MAGPIE_SOURCE_DIR}/tests/golden/serve_common/common.sh"
export MAGPIE_SIM_ARGS="--decode-step-ms 1"
for fw in sglang atom; do
  out="$TMP/$fw"
  "$MAGPIE_BIN" benchmark "$fw" -m sim-model --run-mode local --torch-profiler --concurrency 2 --input-len 16 \
    --output-len 4 --num-prompts 4 -o "$out" > "$TMP/$fw.log" 2>&1 || fail "$fw run failed: $(tail -20 "$TMP/$fw.log")"
  ws=$(workspace_in "$out")
  ls "$ws"/torch_trace/*.json.gz > /dev/null || fail "$fw: no traces"
  grep -q "fake $fw: serving sim-model" "$ws/server.log" || fail "$fw: server.log"
  check_json "$ws/benchmark_report.json" "
assert r['success'] is True, r['errors']
assert r['framework'] == '$fw' and r['kernel_summary']
cmd = r['server']['server_command']
assert cmd[:3] == ['python3', '-m', {'sglang': 'sglang.launch_server', 'atom': 'atom.entrypoints.openai_server'}['$fw']], cmd
"
  assert_no_orphans
done
# dry runs: nothing is launched, the plan is printed
"$MAGPIE_BIN" benchmark vllm -m org/m --tp 2 -p bf16 --dry-run > "$TMP/dry1.json" || fail "dry run"
check_json "$TMP/dry1.json" '
a = r["server"]["launch_command"]
assert a[:3] == ["docker", "run", "--rm"], a
i = a.index("--entrypoint"); assert a[i+1:i+5] == ["vllm", "vllm/vllm-openai:v0.19.1", "serve", "org/m"], a[i:]
s = r["server"]["server_command"]; assert "--tensor-parallel-size" in s and s[s.index("--tensor-parallel-size")+1] == "2"
assert s[s.index("--dtype")+1] == "bfloat16"
assert r["client"]["max_concurrency"] == 32 and r["client"]["num_prompts"] == 320 and r["client"]["range_style"] == "lower_bound"
assert r["run_kind"] == "measurement"
'
"$MAGPIE_BIN" benchmark sglang -m org/m --run-mode local --server-args=--enable-torch-compile --port 30001 --dry-run > "$TMP/dry2.json" || fail "dry run 2"
check_json "$TMP/dry2.json" '
s = r["server"]["server_command"]; assert s == r["server"]["launch_command"]
assert "--enable-torch-compile" in s and s[s.index("--port")+1] == "30001", s
'
if "$MAGPIE_BIN" benchmark xdit -m m --dry-run > /dev/null 2> "$TMP/err"; then fail "xdit accepted"; fi
grep -q "not supported" "$TMP/err" || fail "unclear error: $(cat "$TMP/err")"
if "$MAGPIE_BIN" benchmark > /dev/null 2> "$TMP/err"; then fail "no arguments accepted"; fi
grep -q "give a framework" "$TMP/err" || fail "unclear usage error: $(cat "$TMP/err")"
# every example benchmark config parses and plans
for y in "$MAGPIE_SOURCE_DIR"/examples/benchmarks/*.yaml; do
  "$MAGPIE_BIN" benchmark -b "$y" --dry-run > "$TMP/plan.json" 2> "$TMP/err" || fail "$(basename "$y"): $(cat "$TMP/err")"
  check_json "$TMP/plan.json" 'assert "client" in r and r["config"]["framework"] in ("vllm", "sglang", "atom")'
done
echo "serve_frameworks: ok"
