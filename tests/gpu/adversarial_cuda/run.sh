#!/usr/bin/env bash
# CUDA adversarial suite on a GPU: builds suite.cu, compares every variant against the
# reference and checks each outcome (tests/gpu/adversarial_check.py). Usage:
#   bash tests/gpu/adversarial_cuda/run.sh MAGPIE_BIN OUT_DIR      (repo root; exit 77 without a GPU)
set -uo pipefail
command -v nvidia-smi >/dev/null || { echo "skip: no nvidia-smi (no NVIDIA GPU)"; exit 77; }
BIN=${1:?magpie binary}; OUTD=${2:?output dir}
HERE="$(cd "$(dirname "$0")" && pwd)"; SRC="$(cd "$HERE/../../.." && pwd)"
mkdir -p "$OUTD/bin"
S=${SUITE_BIN:-$OUTD/bin/suite}  # SUITE_BIN: a suite already built (shared with tests/gpu/aa_h200.sh)
[ -x "$S" ] || nvcc -O3 -std=c++17 -arch=sm_90 -I"$SRC/include" "$HERE/suite.cu" -o "$S" || { echo "build failed"; exit 1; }
honest="reference aa_copy honest_float4 honest_side_stream honest_worker honest_graph honest_multistream slow3"
attacks="setup_kernel setup_hidden_copy early_exit forge_records steal_bootstrap forge_marks mode_sniff stale_output memo_fingerprint half_precision worker_async gap_compute ipc_helper ipc_escape ipc_setsid"
{
  echo "reference: {id: reference, type: cuda, testcase_command: [\"$S\", reference]}"
  echo "kernels:"
  for v in $honest $attacks; do
    id=$v; [ $v = reference ] && id=baseline
    echo "  - {id: $id, type: cuda, testcase_command: [\"$S\", $v], env: {MAGPIE_ADV_VARIANT: $v}}"
  done
  echo "correctness: {trials: 4}"
  echo "performance:"
  echo "  backend: cupti"
  echo "  timing: {warmup: 5, min_samples: 10, max_time_s: ${ADV_TIME:-3}, cold: true}"
} > "$OUTD/suite.yaml"
"$BIN" compare -k "$OUTD/suite.yaml" -o "$OUTD/res" > "$OUTD/compare.txt" 2> "$OUTD/compare.err"
rep=$(ls -d "$OUTD"/res/compare_*/compare_report.json | tail -1)
[ -f "$rep" ] || { tail -30 "$OUTD/compare.err"; exit 1; }
python3 "$SRC/tests/gpu/adversarial_check.py" "$rep" baseline=accept aa_copy=accept honest_float4=accept \
  honest_side_stream=accept honest_worker=accept honest_graph=accept honest_multistream=accept slow3=slower setup_kernel=reject setup_hidden_copy=reject \
  early_exit=reject forge_records=reject steal_bootstrap=reject forge_marks=reject mode_sniff=reject \
  stale_output=reject memo_fingerprint=reject half_precision=reject worker_async=not_faster gap_compute=reject ipc_helper=reject ipc_escape=reject ipc_setsid=reject
rc=$?
# ipc_escape outside the sandbox (issue 35 part 6, unverified on a GPU when written): the double-forked
# helper is re-parented to magpie, outside the harness's tree; gpu_processes must still count it.
# ipc_setsid (part f, unverified on a GPU when written): the helper also left the session; its
# environment's tree tag charges it to ipc_setsid, and any harness sampled while it holds the GPU
# that started before it is charged too (a tag never frees a harness): baseline and aa_copy may be
# spoiled here (docs/harness-protocol.md, "What remains"), so only the attacks are checked; the
# honest ones' outcomes are printed.
{
  echo "reference: {id: reference, type: cuda, testcase_command: [\"$S\", reference]}"
  echo "kernels:"
  echo "  - {id: baseline, type: cuda, testcase_command: [\"$S\", reference]}"
  echo "  - {id: ipc_escape, type: cuda, testcase_command: [\"$S\", ipc_escape], env: {MAGPIE_ADV_VARIANT: ipc_escape}}"
  echo "  - {id: aa_copy, type: cuda, testcase_command: [\"$S\", aa_copy], env: {MAGPIE_ADV_VARIANT: aa_copy}}"
  echo "  - {id: ipc_setsid, type: cuda, testcase_command: [\"$S\", ipc_setsid], env: {MAGPIE_ADV_VARIANT: ipc_setsid}}"
  echo "correctness: {trials: 4}"
  echo "performance:"
  echo "  backend: cupti"
  echo "  timing: {warmup: 5, min_samples: 10, max_time_s: ${ADV_TIME:-3}, cold: true}"
} > "$OUTD/escape.yaml"
"$BIN" --no-sandbox compare -k "$OUTD/escape.yaml" -o "$OUTD/res_escape" > "$OUTD/escape.txt" 2> "$OUTD/escape.err"
rep=$(ls -d "$OUTD"/res_escape/compare_*/compare_report.json | tail -1)
[ -f "$rep" ] || { tail -30 "$OUTD/escape.err"; exit 1; }
python3 "$SRC/tests/gpu/adversarial_check.py" "$rep" ipc_escape=reject ipc_setsid=reject || rc=1
python3 "$SRC/tests/gpu/adversarial_check.py" "$rep" baseline=accept aa_copy=accept || echo "(no-sandbox: honest outcomes above are informational)"
exit $rc
