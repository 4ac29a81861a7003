#!/usr/bin/env bash
# `magpie trace sources` on the real H200 trace (examples/traces) with the fixture source tree
# (tests/fixtures/kernel_sources/pytorch) and the trace's own generator (examples/traces):
# each known kernel resolved to the right file:line, ambiguous / closed-source names reported.
set -euo pipefail
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
"$MAGPIE_BIN" trace sources --help >/dev/null 2>&1 || { echo "skip: this build has no 'trace sources'"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trace="$MAGPIE_SOURCE_DIR/examples/traces/llama_tiny-rank-0.pt.trace.json.gz"
"$MAGPIE_BIN" trace sources "$trace" --json -o "$work/out" \
  --kernel-source-repos "$MAGPIE_SOURCE_DIR/tests/fixtures/kernel_sources/pytorch" "$MAGPIE_SOURCE_DIR/examples/traces" \
  > "$work/report.json"
python3 "$MAGPIE_SOURCE_DIR/tests/golden/sources_real_trace/check.py" "$work/report.json" "$work/out/kernel_sources.csv"
cmp -s <(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), sort_keys=True))' "$work/report.json") \
       <(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), sort_keys=True))' "$work/out/kernel_sources.json") \
  || { echo "FAIL: stdout JSON and kernel_sources.json differ"; exit 1; }
