#!/usr/bin/env bash
# `magpie trace sources` where a name has look-alikes: hand-written aiter / vLLM / SGLang kernels
# of the same name with other signatures or namespaces (tree/, see its README), a fork's copy and
# a test copy beside a primary definition, ROCm names mangled with DF16b / DF16_ / `Tn`, library
# kernels (MIOpen, composable_kernel, aiter assembly, cuBLAS GEMV) and the candidate threshold;
# then `-k` on a small trace with copy and fill rows.
set -euo pipefail
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
"$MAGPIE_BIN" trace sources --help >/dev/null 2>&1 || { echo "skip: this build has no 'trace sources'"; exit 77; }
here="$MAGPIE_SOURCE_DIR/tests/golden/sources_lookalikes"
t="$here/tree"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() {  # run OUT ROOT... : map names.txt against the roots
  local out=$1; shift
  "$MAGPIE_BIN" trace sources --names-file "$here/names.txt" --json -r "$@" > "$work/$out" 2> "$work/$out.err" ||
    { cat "$work/$out.err"; exit 1; }
}
run vllm.json "$t/vllm"
run vllm_aiter.json "$t/vllm" "$t/aiter"
run all.json "$t/vllm" "$t/aiter" "$t/sglang" "$t/atenfork" "$t/refs"
grep -v '^#' "$here/classify.tsv" | cut -f1 > "$work/classify.txt"
"$MAGPIE_BIN" trace sources --names-file "$work/classify.txt" --json > "$work/classify.json" 2>/dev/null
# A trace whose largest rows are a copy, a fill and a runtime blit: -k 2 maps two kernels.
cat > "$work/trace.json" <<'JSON'
{"traceEvents": [
 {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 0, "dur": 900},
 {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 1000, "dur": 800},
 {"ph": "X", "cat": "kernel", "name": "__amd_rocclr_copyBuffer", "pid": 0, "tid": 7, "ts": 2000, "dur": 700},
 {"ph": "X", "cat": "kernel", "name": "big_kernel", "pid": 0, "tid": 7, "ts": 3000, "dur": 300},
 {"ph": "X", "cat": "kernel", "name": "mid_kernel", "pid": 0, "tid": 7, "ts": 4000, "dur": 200},
 {"ph": "X", "cat": "kernel", "name": "small_kernel", "pid": 0, "tid": 7, "ts": 5000, "dur": 100}
]}
JSON
"$MAGPIE_BIN" trace sources "$work/trace.json" -k 2 --json > "$work/top2.json" 2>/dev/null
"$MAGPIE_BIN" trace sources "$work/trace.json" --json > "$work/all_rows.json" 2>/dev/null
python3 "$here/check.py" "$here" "$work"
