#!/usr/bin/env bash
# Gap analysis on the real H200 trace and on the two-rank fixture: magpie's CSVs must be
# byte-identical to an independent Python implementation of Magpie's algorithm
# (gap_reference.py: json/gzip/csv only), for the default and a windowed configuration.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${MAGPIE_BIN:?}" "${MAGPIE_SOURCE_DIR:?}"
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ws/torch_trace"
cp "$MAGPIE_SOURCE_DIR/examples/traces/llama_tiny-rank-0.pt.trace.json.gz" "$work/ws/torch_trace/"
real="$work/ws/torch_trace/llama_tiny-rank-0.pt.trace.json.gz"
cd "$work"

# 1. Default flags, workspace dir (torch_trace/ descended), default output ./results/gap_analysis.
"$MAGPIE_BIN" -q benchmark --trace-dir "$work/ws" > out.txt
grep -q "^Gap Analysis (0.0%-100.0% window, category-filtered)$" out.txt
grep -q "^Ranks analyzed: 1$" out.txt
grep -q "^Output: ./results/gap_analysis$" out.txt
python3 "$here/gap_reference.py" ref1 20 0 100 0 "$real" > ref1.txt
cmp ref1/gap_analysis.csv results/gap_analysis/gap_analysis.csv
grep -q "Total duration: $(python3 -c "import sys; print(f'{float(sys.argv[1].split(\"=\")[1]):.2f}')" "$(cat ref1.txt)") us" out.txt
test ! -e results/gap_analysis/gap_analysis_rank0.csv   # single rank: no per-rank CSV

# 2. Window, min duration, top-k.
rm -rf results
"$MAGPIE_BIN" -q benchmark --trace-dir "$work/ws/torch_trace" --start-pct 20 --end-pct 70 --min-duration-us 2 --top-k 7 > out2.txt
python3 "$here/gap_reference.py" ref2 7 20 70 2 "$real" > /dev/null
cmp ref2/gap_analysis.csv results/gap_analysis/gap_analysis.csv
grep -q "^Gap Analysis (20.0%-70.0% window, category-filtered)$" out2.txt

# 3. Two ranks: merged CSV and per-rank CSVs; --no-rank-csv suppresses the latter.
rm -rf results
fx="$MAGPIE_SOURCE_DIR/tests/fixtures/traces/two_ranks"
"$MAGPIE_BIN" -q benchmark --trace-dir "$fx" > out3.txt
python3 "$here/gap_reference.py" ref3 20 0 100 0 "$fx/job-rank-0.pt.trace.json" "$fx/job-rank-1.pt.trace.json" > /dev/null
for f in gap_analysis.csv gap_analysis_rank0.csv gap_analysis_rank1.csv; do cmp "ref3/$f" "results/gap_analysis/$f"; done
grep -q "^Ranks analyzed: 2$" out3.txt
rm -rf results
"$MAGPIE_BIN" -q benchmark --trace-dir "$fx" --no-rank-csv > /dev/null
test ! -e results/gap_analysis/gap_analysis_rank0.csv

# 4. Clamped traces: valid gzip JSON, events clipped to the window.
rm -rf results
"$MAGPIE_BIN" -q benchmark --trace-dir "$work/ws" --start-pct 70 --end-pct 90 --clamped-traces > /dev/null
clamped="results/gap_analysis/llama_tiny-rank-0.pt.trace_clamped_70.0_90.0.trace.json.gz"
python3 - "$clamped" "$real" <<'PY'
import gzip, json, sys
c = json.load(gzip.open(sys.argv[1])); o = json.load(gzip.open(sys.argv[2]))
assert set(c) == set(o), (set(c), set(o))
timed = [e for e in o["traceEvents"] if "ts" in e and e.get("dur", 0) > 0]
t0 = min(e["ts"] for e in timed); t1 = max(e["ts"] + e["dur"] for e in timed)
lo, hi = t0 + (t1 - t0) * 0.7, t0 + (t1 - t0) * 0.9
ev = c["traceEvents"]
assert 0 < len(ev) < len(o["traceEvents"])
for e in ev:
    assert lo - 1e-6 <= e["ts"] and e["ts"] + e["dur"] <= hi + 1e-6, e
expect = sum(1 for e in o["traceEvents"] if "ts" in e and not (e["ts"] + e.get("dur", 0) < lo or e["ts"] > hi))
assert len(ev) == expect, (len(ev), expect)
PY

# 5. Kernel sources: Magpie's preamble, 15 extra columns; the trace's Triton kernel resolves to
#    its @triton.jit definition in gen_trace.py (the repository root given is examples/traces).
rm -rf results
mkdir -p repos && cp -r "$MAGPIE_SOURCE_DIR/examples/traces" repos/mykernels
"$MAGPIE_BIN" -q benchmark --trace-dir "$work/ws" --top-k 60 --find-kernel-sources --kernel-source-repos repos/mykernels > /dev/null
csvf=results/gap_analysis/gap_analysis.csv
head -1 "$csvf" | grep -qx "# Repository Path Mappings:"
grep -qx "# Warning: columns 7-21 from find_kernel_sources are experimental." "$csvf"
python3 - "$csvf" <<'PY'
import csv, sys
rows = list(csv.reader(l for l in open(sys.argv[1], newline="") if not l.startswith("#")))
assert len(rows[0]) == 21 and rows[0][6] == "kind" and rows[0][20] == "source_error", rows[0]
res = [r for r in rows[1:] if r[0] == "residual_scale_kernel"]
assert res and res[0][6] == "triton_jit" and res[0][19] == "resolved", res
assert res[0][9].startswith("$MYKERNELS_DIR/gen_trace.py:"), res[0][9]
PY

# 6. Errors: missing dir → exit 1; bad window → usage error.
if "$MAGPIE_BIN" -q benchmark --trace-dir "$work/nope" > out.txt 2> err.txt; then exit 1; fi
grep -q "Error: trace directory not found" err.txt
test ! -s out.txt  # errors go to stderr only
set +e; "$MAGPIE_BIN" -q benchmark --trace-dir "$work/ws" --start-pct 80 --end-pct 20 2> err2.txt; rc=$?; set -e
test "$rc" -eq 2
grep -q "must be less than" err2.txt
echo "gap_real_trace: ok"
