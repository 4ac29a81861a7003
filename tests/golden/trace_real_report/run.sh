#!/usr/bin/env bash
# magpie trace report / stages / timeline / roofline on the real H200 trace; every number that
# can be recomputed from the raw events is cross-checked by crosscheck.py (json/gzip/csv only).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${MAGPIE_BIN:?}" "${MAGPIE_SOURCE_DIR:?}"
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
real="$MAGPIE_SOURCE_DIR/examples/traces/llama_tiny-rank-0.pt.trace.json.gz"
export MAGPIE_DATA_DIR="$MAGPIE_SOURCE_DIR/data"
cd "$work"

"$MAGPIE_BIN" -q trace report "$real" -o rep > report.txt
grep -q "^GPU spec: table entry H200 for 'NVIDIA H200' (achievable)$" report.txt
for f in report.json ops.csv kernels.csv gpu_timeline.csv execution_details.csv report.html; do test -s "rep/$f"; done
"$MAGPIE_BIN" -q trace stages "$real" -o tl --isl 96 --osl 8 --conc 2 > stages.txt
python3 "$here/crosscheck.py" "$real" rep tl

# The HTML page is self-contained: inline SVG, no scripts, stylesheets or remote assets.
html=rep/report.html
grep -q "<svg" "$html"
grep -q "<circle" "$html"          # roofline points
grep -q "matrix_bf16 790 TFLOP/s" "$html"
if grep -Eq "<script|<link|src=|@import|https://" "$html"; then echo "external reference in report.html"; exit 1; fi
if grep -o "http://[^'\" ]*" "$html" | grep -v "^http://www.w3.org/2000/svg$"; then exit 1; fi

# tracelens_analysis block.
"$MAGPIE_BIN" -q trace stages "$real" -o tl2 --stages decode --conc 2 --json > block.json
python3 - block.json <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
assert b["enabled"] is True and b["analysis_mode"] == "inference", b
assert b["analysis_stages"] == ["decode"]
assert b["gpu_arch_platform"] == "H200"
pick = b["phase_picks"]["decode"]
assert pick["output_label"] == "decode_only" and pick["batch_size"] == 2, pick
r = b["stage_results"]["decode"]
assert r["simple_summary_file"].endswith("decode_only_ISLunknown_OSLunknown_CONC2_kernel_roofline_simple.csv"), r
assert not b["errors"], b["errors"]
PY

# Datasheet ceilings and a user arch file change the roofline columns.
cat > arch.json <<'J'
{"name": "toy", "mem_bw_gbps": 1000, "max_achievable_tflops": {"matrix_bf16": 100, "vector_bf16": 10, "vector_fp32": 5}}
J
"$MAGPIE_BIN" -q trace roofline "$real" --gpu-spec arch.json --csv toy.csv > roof.txt
grep -q "^GPU spec: --gpu-spec arch.json$" roof.txt
python3 - toy.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    if r["op_name"] == "aten::mm" and r["compute_spec"] == "matrix_bf16":
        f, b = float(r["gflops"]) * 1e9, float(r["bytes"])
        want = max(f / 100e12, b / 1000e9) * 1e6
        assert abs(float(r["roofline_time_us"]) - want) <= 1e-9 * want, (r, want)
        break
else:
    raise SystemExit("no bf16 mm row")
PY
"$MAGPIE_BIN" -q trace timeline "$real" --json | python3 -c "import json,sys; j=json.load(sys.stdin); assert j['gpu_timeline'][3]['type']=='busy_time'"
set +e; "$MAGPIE_BIN" -q trace roofline "$real" --gpu NOPE > /dev/null 2> err.txt; rc=$?; set -e
test "$rc" -eq 2 && grep -q "no GPU spec entry matches 'NOPE'" err.txt
echo "trace_real_report: ok"
