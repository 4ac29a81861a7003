#!/usr/bin/env bash
# examples/serving (the GPU example server) orchestrated by `magpie benchmark vllm` through its
# `vllm` shim: the HTTP layer with the fake backend (needs python3-aiohttp), and when PyTorch is
# importable a tiny random-weight model on the CPU with torch profiling plus the KV-cache check.
set -euo pipefail
source "${MAGPIE_SOURCE_DIR:?set MAGPIE_SOURCE_DIR}/tests/golden/serve_common/common.sh"
PY=""
for cand in python3 /usr/bin/python3; do
  if "$cand" -c 'import aiohttp' 2>/dev/null; then PY=$cand; break; fi
done
[ -n "$PY" ] || { echo "skip: no python3 with aiohttp (python3-aiohttp)"; exit 77; }
export PYTHON=$PY
export PATH="$MAGPIE_SOURCE_DIR/examples/serving/bin:$PATH"   # the example's vllm shim wins over the simulator's
out="$TMP/fake"
MAGPIE_EXAMPLE_ARGS="--backend fake --fake-decode-step-ms 2" "$MAGPIE_BIN" benchmark vllm -m magpie-tiny-llama \
  --run-mode local --concurrency 4 --input-len 32 --output-len 8 --num-prompts 12 --ready-timeout 60 -o "$out" \
  > "$TMP/fake.log" 2>&1 || fail "fake backend run: $(tail -30 "$TMP/fake.log")"
ws=$(workspace_in "$out")
grep -q "backend fake" "$ws/server.log" || fail "server.log"
check_json "$ws/benchmark_report.json" '
assert r["success"] is True, r["errors"]
t = r["throughput"]; assert t["completed_requests"] == 12 and t["failed_requests"] == 0
assert r["serving"]["tokens"]["output_source"] == "usage" and r["serving"]["tokens"]["requests_with_token_deltas"] == 12
assert r["latency"]["tpot"]["median_ms"] >= 1.5, r["latency"]["tpot"]
'
# chat endpoint: role-only first chunk is not counted as a token
out="$TMP/chat"
MAGPIE_EXAMPLE_ARGS="--backend fake --fake-decode-step-ms 1" "$MAGPIE_BIN" benchmark vllm -m magpie-tiny-llama \
  --run-mode local --endpoint /v1/chat/completions --random-input-len 16 --random-output-len 4 --num-prompts 4 \
  --ready-timeout 60 -o "$out" > "$TMP/chat.log" 2>&1 || fail "chat run: $(tail -30 "$TMP/chat.log")"
check_json "$(workspace_in "$out")/benchmark_report.json" '
assert r["success"] is True and r["serving"]["tokens"]["role_only_chunks"] == 4, r["serving"]["tokens"]
assert r["throughput"]["total_output_tokens"] == 16
'
if ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "serve_example_server: ok (fake backend; torch not importable by $PY, torch part skipped)"
  exit 0
fi
"$PY" "$MAGPIE_SOURCE_DIR/examples/serving/check_tiny_llama.py" || fail "tiny_llama KV-cache check"
cat > "$TMP/bench.yaml" <<YAML
benchmark:
  framework: vllm
  model: magpie-tiny-llama
  run_mode: local
  envs: {CONC: 4, ISL: 48, OSL: 6, NUM_PROMPTS: 8, MAX_MODEL_LEN: 256,
         EXTRA_VLLM_ARGS: "--num-layers 2 --hidden-size 128 --num-heads 4 --num-kv-heads 2 --intermediate-size 256 --vocab-size 1000 --max-num-seqs 8"}
  profiler: {torch_profiler: {enabled: true}}
  gap_analysis: {enabled: true, categories: []}   # Debian torch 1.13 (no kineto) writes events without "cat"
  server: {ready_timeout_s: 120}
YAML
out="$TMP/torch"
"$MAGPIE_BIN" benchmark -b "$TMP/bench.yaml" -o "$out" > "$TMP/torch.log" 2>&1 || fail "torch run: $(tail -30 "$TMP/torch.log")"
ws=$(workspace_in "$out")
ls "$ws"/torch_trace/*-rank-0.*.pt.trace.json.gz > /dev/null || fail "no torch trace"
check_json "$ws/benchmark_report.json" '
assert r["success"] is True, r["errors"]
assert r["throughput"]["completed_requests"] == 8
assert r["server"]["profiler_args"] == "flags"
g = r["gap_analysis"]; assert g and g["top_kernels"], g   # CPU run: CPU ops only
assert any(k["name"].startswith("aten::") for k in g["top_kernels"]), [k["name"] for k in g["top_kernels"]]
'
echo "serve_example_server: ok (fake backend and torch $("$PY" -c 'import torch; print(torch.__version__)') on CPU)"
