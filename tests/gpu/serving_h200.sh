#!/usr/bin/env bash
# H200 serving benchmark: `magpie benchmark vllm` orchestrates the example model server
# (examples/serving: a 4-layer, hidden-1024 Llama with random weights in plain PyTorch, behind
# a `vllm` shim) on the GPU, without and with torch profiling; then prints the headline metrics
# and the files produced. Also runs the client benchmark (bench/serve) on the host's cores.
# Exit 77 without an NVIDIA GPU or without a python3 that has torch (CUDA) and aiohttp.
# Env: MAGPIE_BIN (default build/magpie), PYTHON (default python3), OUT (results dir), SKIP_CLIENT_BENCH=1.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
MAGPIE=${MAGPIE_BIN:-$root/build/magpie}
PY=${PYTHON:-python3}
command -v nvidia-smi > /dev/null || { echo "skip: no nvidia-smi (no NVIDIA GPU)"; exit 77; }
nvidia-smi -L > /dev/null 2>&1 || { echo "skip: nvidia-smi finds no GPU"; exit 77; }
"$PY" -c 'import torch, aiohttp; assert torch.cuda.is_available()' 2>/dev/null \
  || { echo "skip: $PY lacks torch with CUDA or aiohttp"; exit 77; }
[ -x "$MAGPIE" ] || { echo "FAIL: $MAGPIE not built"; exit 1; }
OUTDIR=${OUT:-$(mktemp -d)}
mkdir -p "$OUTDIR"
export PATH="$root/examples/serving/bin:$PATH" PYTHON="$PY" MAGPIE_NO_PROGRESS=1
echo "GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)"
echo "torch: $("$PY" -c 'import torch; print(torch.__version__, torch.version.cuda)')"
"$PY" "$root/examples/serving/check_tiny_llama.py"

headline() {  # headline WORKSPACE
  "$PY" - "$1" <<'PY'
import json, os, sys
ws = sys.argv[1]
r = json.load(open(os.path.join(ws, "benchmark_report.json")))
t, l = r["throughput"] or {}, r["latency"] or {}
print(f"  success={r['success']} run_kind={r['run_kind']} errors={r['errors']}")
if t:
    print(f"  completed {t['completed_requests']} failed {t['failed_requests']} in {t['duration_seconds']:.2f} s: "
          f"{t['request_throughput']:.2f} req/s, {t['output_throughput']:.0f} output tok/s, {t['total_token_throughput']:.0f} total tok/s")
    for m in ("ttft", "tpot", "itl", "e2el", "queue_time"):
        d = l[m]
        print(f"  {m:10s} mean {d['mean_ms']:8.2f}  median {d['median_ms']:8.2f}  p90 {d['p90_ms']:8.2f}  p99 {d['p99_ms']:8.2f} ms")
print(f"  gpu assignment: {r['provenance']['gpu_assignment'] and r['provenance']['gpu_assignment']['env']}")
if r["kernel_summary"]:
    print("  top kernels:")
    for k in r["kernel_summary"][:5]:
        print(f"    {k['percent']:5.1f}%  {k['time_ms']:9.3f} ms  {k['calls']:6d} calls  {k['name'][:90]}")
t = r.get("tracelens_analysis")
if t:
    print(f"  tracelens_analysis: stages {t.get('analysis_stages')}, files {len(t.get('output_files', []))}, errors {t.get('errors')}")
g = r.get("gap_analysis")
if g:
    print(f"  gap analysis: {g['num_ranks']} rank(s), total {g['total_duration_us']:.0f} us, top: "
          + "; ".join(f"{k['name'][:40]} {k['pct_total']:.1f}%" for k in g["top_kernels"][:3]))
for root_dir, _, files in os.walk(ws):
    for f in sorted(files):
        p = os.path.join(root_dir, f)
        print(f"    {os.path.relpath(p, ws)}  ({os.path.getsize(p)} bytes)")
PY
}

echo
echo "== 1. measurement run (no profiler): 256 requests, concurrency 32, ISL 512, OSL 128 =="
"$MAGPIE" benchmark vllm -m magpie-tiny-llama --run-mode local --concurrency 32 --input-len 512 --output-len 128 \
  --num-prompts 256 --ready-timeout 300 --timeout 600 -o "$OUTDIR/plain" > "$OUTDIR/plain.log" 2>&1 || true
ws=$(ls -d "$OUTDIR"/plain/benchmark_* 2>/dev/null | head -1 || true)
[ -n "$ws" ] || { tail -30 "$OUTDIR/plain.log"; echo "FAIL: no workspace"; exit 1; }
headline "$ws"

echo
echo "== 2. diagnostic run: torch profiler over a separate 16-request pass, gap analysis, inference (tracelens) analysis =="
cat > "$OUTDIR/profiled.yaml" <<YAML
benchmark:
  framework: vllm
  model: magpie-tiny-llama
  run_mode: local
  envs: {CONC: 32, ISL: 512, OSL: 128, NUM_PROMPTS: 128}
  profiler:
    torch_profiler: {enabled: true, profile_prompts: 16}
    tracelens: {enabled: true}
  gap_analysis: {enabled: true, top_k: 10}
  server: {ready_timeout_s: 300}
  timeout_seconds: 900
YAML
"$MAGPIE" benchmark -b "$OUTDIR/profiled.yaml" -o "$OUTDIR/profiled" > "$OUTDIR/profiled.log" 2>&1 || true
ws2=$(ls -d "$OUTDIR"/profiled/benchmark_* 2>/dev/null | head -1 || true)
[ -n "$ws2" ] || { tail -30 "$OUTDIR/profiled.log"; echo "FAIL: no workspace"; exit 1; }
headline "$ws2"
ok=$("$PY" -c "import json,sys; a=json.load(open('$ws/benchmark_report.json')); b=json.load(open('$ws2/benchmark_report.json')); print(int(a['success'] and b['success'] and bool(b['kernel_summary'])))")

if [ "${SKIP_CLIENT_BENCH:-0}" != "1" ] && [ -x "$(dirname "$MAGPIE")/tests/sim/magpie_sim_server" ]; then
  echo
  echo "== 3. client benchmark (bench/serve/run.sh) on this host =="
  BUILD_DIR=$(dirname "$MAGPIE") MAGPIE_BIN="$MAGPIE" PYTHON="$PY" bash "$root/bench/serve/run.sh" || echo "client benchmark failed"
fi
[ "$ok" = 1 ] || { echo "FAIL: a run failed (logs: $OUTDIR/*.log)"; exit 1; }
echo "serving_h200: ok (results in $OUTDIR)"
