#!/usr/bin/env bash
# The analysis of a multi-rank trace directory, shared by tests/gpu/multi_gpu_x2.sh (real
# two-GPU traces) and tests/golden/multi_rank_comm (generated ones), so the GPU run's checker is
# itself tested on the CPU:
#   1. magpie benchmark --trace-dir: gap analysis with per-rank CSVs
#   2. magpie trace report per rank: report.json with analysis.communication (exposed/overlapped)
#   3. check_comm.py: an independent recomputation from the raw events, compared with both
# Usage: analyze.sh TRACE_DIR OUT_DIR [check_comm.py options]; needs MAGPIE_BIN and python3.
# Rank traces are TRACE_DIR/*rank<N>*.pt.trace.json[.gz] (other files there are ignored).
set -euo pipefail
: "${MAGPIE_BIN:?MAGPIE_BIN is not set}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
traces="$1" out="$2"
shift 2
mkdir -p "$out"
"$MAGPIE_BIN" benchmark --trace-dir "$traces" -o "$out/gap" --top-k 100000 > "$out/gap.txt" 2> "$out/gap.err"
for t in "$traces"/*rank*.pt.trace.json "$traces"/*rank*.pt.trace.json.gz; do  # not tp_mlp's *.summary.json
  [ -e "$t" ] || continue
  case "$t" in *clamped*) continue ;; esac
  r=$(basename "$t" | sed -E 's/.*rank[-_]?([0-9]+).*/\1/')
  "$MAGPIE_BIN" trace report "$t" -o "$out/report_rank$r" --no-html > "$out/report_rank$r.txt" 2> "$out/report_rank$r.err"
done
python3 "$here/check_comm.py" "$traces" "$out" --json "$out/comm_check.json" "$@"
