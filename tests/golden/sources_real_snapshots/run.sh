#!/usr/bin/env bash
# `magpie trace sources` on real public source snapshots (vLLM, PyTorch ATen, flashinfer) against
# the hand-checked ground truth in ground_truth.tsv: prints precision, recall and classification
# accuracy and fails when they fall below metrics.json. Needs the snapshots (not committed):
#   MAGPIE_VLLM_SRC=DIR MAGPIE_PYTORCH_SRC=DIR [MAGPIE_FLASHINFER_SRC=DIR] [MAGPIE_AITER_SRC=DIR]
# at the commits named in ground_truth.tsv; skips (exit 77) when they are not set or differ.
set -euo pipefail
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
"$MAGPIE_BIN" trace sources --help >/dev/null 2>&1 || { echo "skip: this build has no 'trace sources'"; exit 77; }
for v in MAGPIE_VLLM_SRC MAGPIE_PYTORCH_SRC; do
  [[ -n "${!v:-}" && -d "${!v}" ]] || { echo "skip: $v is not set to a source snapshot (see ground_truth.tsv)"; exit 77; }
done
here="$MAGPIE_SOURCE_DIR/tests/golden/sources_real_snapshots"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
roots=("$MAGPIE_VLLM_SRC" "$MAGPIE_PYTORCH_SRC")
given="VLLM PYTORCH"
[[ -n "${MAGPIE_FLASHINFER_SRC:-}" && -d "$MAGPIE_FLASHINFER_SRC" ]] && { roots+=("$MAGPIE_FLASHINFER_SRC"); given+=" FLASHINFER"; }
[[ -n "${MAGPIE_AITER_SRC:-}" && -d "$MAGPIE_AITER_SRC" ]] && { roots+=("$MAGPIE_AITER_SRC"); given+=" AITER"; }
grep -v '^#' "$here/ground_truth.tsv" | cut -f5 > "$work/names.txt"
start=$(date +%s%N)
"$MAGPIE_BIN" trace sources --names-file "$work/names.txt" --json -r "${roots[@]}" > "$work/report.json" 2> "$work/stderr" ||
  { cat "$work/stderr"; exit 1; }
end=$(date +%s%N)
python3 "$here/check.py" "$here" "$work/report.json" "$(( (end - start) / 1000000 ))" "$given"
