#!/usr/bin/env bash
# Torch adversarial suite on a GPU (bf16 GEMM): compares every variant against the reference and
# checks each outcome (tests/gpu/adversarial_check.py). Usage (repo root, exit 77 without a GPU):
#   bash tests/gpu/adversarial_torch/run.sh MAGPIE_BIN OUT_DIR
set -uo pipefail
command -v nvidia-smi >/dev/null || { echo "skip: no nvidia-smi (no NVIDIA GPU)"; exit 77; }
BIN=${1:?magpie binary}; OUTD=${2:?output dir}
HERE="$(cd "$(dirname "$0")" && pwd)"; SRC="$(cd "$HERE/../../.." && pwd)"
mkdir -p "$OUTD"
honest="aa_copy honest_einsum honest_splitk honest_side_stream"
attacks="own_inputs worker_thread patch_event_timer read_reference early_exit forge_cupti steal_bootstrap cache_pointer cache_fingerprint precompute_copy_hook stale_persistent skip_k side_stream_nosync"
{
  echo "reference: {id: reference, type: pytorch, source_files: [\"$HERE/ref.py\"], entry: matmul}"
  echo "kernels:"
  echo "  - {id: baseline, type: pytorch, source_files: [\"$HERE/ref.py\"], entry: matmul}"
  for v in $honest $attacks; do
    echo "  - {id: $v, type: pytorch, source_files: [\"$HERE/$v.py\"], entry: kernel}"
  done
  echo "correctness: {trials: 3}"
  echo "performance:"
  echo "  backend: cupti"
  echo "  timing: {warmup: 5, min_samples: 10, max_time_s: ${ADV_TIME:-3}, cold: true}"
} > "$OUTD/suite.yaml"
"$BIN" compare -k "$OUTD/suite.yaml" -o "$OUTD/res" > "$OUTD/compare.txt" 2> "$OUTD/compare.err"
rep=$(ls -d "$OUTD"/res/compare_*/compare_report.json | tail -1)
[ -f "$rep" ] || { tail -30 "$OUTD/compare.err"; exit 1; }
python3 "$SRC/tests/gpu/adversarial_check.py" "$rep" baseline=accept aa_copy=accept honest_einsum=accept \
  honest_splitk=accept honest_side_stream=accept own_inputs=reject worker_thread=not_faster \
  patch_event_timer=not_faster read_reference=reject early_exit=reject forge_cupti=reject steal_bootstrap=reject \
  cache_pointer=reject cache_fingerprint=reject precompute_copy_hook=reject stale_persistent=reject skip_k=reject \
  side_stream_nosync=not_faster
