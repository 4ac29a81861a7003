#!/usr/bin/env bash
# Output encodings (issue 16 §7, §8): CSVs are valid UTF-8 whatever bytes the trace names hold
# (invalid sequences become U+FFFD, as report.json already did); `--xlsx` and
# `--export-format excel` write one workbook per report with a sheet per table and numeric
# cells typed as numbers; unknown export formats are refused.
set -euo pipefail
: "${MAGPIE_BIN:?}" "${MAGPIE_SOURCE_DIR:?}"
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
export MAGPIE_DATA_DIR="$MAGPIE_SOURCE_DIR/data"
real="$MAGPIE_SOURCE_DIR/examples/traces/llama_tiny-rank-0.pt.trace.json.gz"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cd "$work"

# A kernel name with invalid UTF-8 bytes (\xff, a truncated 3-byte sequence) inside the JSON string.
python3 - "$real" bad_utf8.json <<'PY'
import gzip, sys
raw = gzip.open(sys.argv[1]).read()
i = raw.index(b'"cat": "kernel", "name": "') + len(b'"cat": "kernel", "name": "')
open(sys.argv[2], "wb").write(raw[:i] + b"bad\xffname\xe2\x82" + raw[i:])
PY
"$MAGPIE_BIN" -q trace report bad_utf8.json -o rep --xlsx > /dev/null
"$MAGPIE_BIN" -q trace gap bad_utf8.json -o gap --top-k 100000 > /dev/null
python3 - rep gap/gap_analysis/gap_analysis.csv <<'PY'
import csv, glob, sys
files = glob.glob(sys.argv[1] + "/*.csv") + [sys.argv[2]]
hits = 0
for f in files:
    text = open(f, encoding="utf-8", errors="strict").read()   # raises on invalid UTF-8
    hits += text.count("bad\ufffdname\ufffd")
    list(csv.reader(text.splitlines()))
assert hits >= 2, f"replacement characters missing ({hits})"
print(f"{len(files)} CSVs are valid UTF-8")
PY

# The workbook: a sheet per table, numbers as numeric cells, names as strings.
python3 - rep/report.xlsx <<'PY'
import re, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
wb = z.read("xl/workbook.xml").decode()
sheets = re.findall(r'<sheet name="([^"]+)"', wb)
assert sheets == ["ops", "kernels", "ops_by_name", "gpu_timeline", "execution_details"], sheets
shared = z.read("xl/sharedStrings.xml").decode()
assert "kernel_name" in shared and "bad\ufffdname" in shared
k = z.read("xl/worksheets/sheet2.xml").decode()               # kernels
row2 = re.search(r'<row r="2".*?</row>', k, re.S).group(0)
assert '<c r="A2" t="s"' in row2, row2[:200]                   # kernel name: a string
num = re.search(r'<c r="C2"[^>]*>(.*?)</c>', row2).group(0)    # calls: a plain number cell
assert 't="s"' not in num and "<v>" in num, num
print("workbook ok:", sheets)
PY

# Stages with Magpie's export_format: excel adds one workbook per stage; unknown formats fail.
"$MAGPIE_BIN" -q trace stages "$real" -o tl --export-format excel --stages decode > /dev/null
test -s tl/decode_only/decode_only.xlsx && test -s tl/decode_only/ops.csv
set +e; "$MAGPIE_BIN" -q trace stages "$real" -o tl2 --export-format parquet > /dev/null 2> err.txt; rc=$?; set -e
test "$rc" -eq 2 && grep -q "export_format 'parquet' is not supported (csv or excel)" err.txt
echo "trace_export_formats: ok"
