#!/usr/bin/env bash
# One device call: the serving benchmark on the H200 (examples/serving), then the CUDA/Triton/
# KernelBench compares again after the read-based L2 flush (CUPTI vs ncu). Logs → $OUT/final_a.tar.gz.
# Also registered as the CTest gpu.final_a: skips (77) without an NVIDIA GPU.
set -uo pipefail
cd "${MAGPIE_SOURCE_DIR:-$(dirname "$0")/../..}" || exit 1
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || { echo "skip: no NVIDIA GPU"; exit 77; }
BUILD=$(cd "${1:-${MAGPIE_BUILD_DIR:-build}}" && pwd) || exit 1
W=$(mktemp -d)
OUT=${OUT:-$(mktemp -d)}; mkdir -p "$OUT"  # outside $W: $W is tarred into $OUT
export MAGPIE_NO_PROGRESS=1
( OUT=$W/serve SKIP_CLIENT_BENCH=1 MAGPIE_BIN=$BUILD/magpie timeout 280 bash tests/gpu/serving_h200.sh ) > $W/serve.log 2>&1
echo "serving_h200 rc=$?"; tail -n 60 $W/serve.log
ISSUE2_ONLY="cuda_aa triton_compare pytorch_compare" OUT=$W/issue2 timeout 200 bash tests/gpu/issue2_h200.sh $BUILD > $W/issue2.log 2>&1
echo "issue2 rc=$?"; grep -v "^=== \|^  \|^Kernel\|^Corr\|^Perf\|^Winner" $W/issue2.log | tail -n 30
tar czf $OUT/final_a.tar.gz -C $W . 2>/dev/null; ls -la $OUT
