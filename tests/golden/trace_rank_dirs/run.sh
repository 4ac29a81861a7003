#!/usr/bin/env bash
# Rank directories (issue 16 §2): a rank-0 .json beside a rank-3 .json.gz is not lost, the
# choice is said; two files claiming one rank are refused until --rank-file picks one; ranks
# that do not look like one run (other GPU, disjoint time spans) are warned about.
set -euo pipefail
: "${MAGPIE_BIN:?}" "${MAGPIE_SOURCE_DIR:?}"
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
fx="$MAGPIE_SOURCE_DIR/tests/fixtures/traces/two_ranks"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cd "$work"
r0=$(ls "$fx"/*rank-0*) r1=$(ls "$fx"/*rank-1*)

# Mixed suffixes: both ranks analysed, and stderr says which files were taken and why.
mkdir mixed
python3 -c "import json,sys; json.dump(json.load(open(sys.argv[1])), open('mixed/run-rank-0.pt.trace.json','w'))" "$r0"
python3 -c "import gzip,json,sys; gzip.open('mixed/run-rank-3.pt.trace.json.gz','wt').write(open(sys.argv[1]).read())" "$r1"
"$MAGPIE_BIN" trace gap mixed -o m > m.txt 2> m.err
grep -q "^Ranks analyzed: 2$" m.txt
grep -q "Found 2 trace file(s) in .*mixed (rank_gz+json): rank 0 run-rank-0.pt.trace.json, rank 3 run-rank-3.pt.trace.json.gz" m.err
test -s m/gap_analysis/gap_analysis_rank0.csv && test -s m/gap_analysis/gap_analysis_rank3.csv

# Two files claiming rank 0: refused (exit 1, both named), then chosen with --rank-file.
mkdir dup
cp "$r0" dup/a-rank-0.pt.trace.json; cp "$r0" dup/b-rank-0.pt.trace.json; cp "$r1" dup/a-rank-1.pt.trace.json
set +e; "$MAGPIE_BIN" -q trace gap dup -o d > d.txt 2> d.err; rc=$?; set -e
test "$rc" -eq 1
grep -q "Several trace files claim rank 0: a-rank-0.pt.trace.json, b-rank-0.pt.trace.json: pass --rank-file" d.err
test ! -e d/gap_analysis/gap_analysis.csv
"$MAGPIE_BIN" trace gap dup -o d --rank-file b-rank-0.pt.trace.json > d2.txt 2> d2.err
grep -q "^Ranks analyzed: 2$" d2.txt
grep -q "rank 0: b-rank-0.pt.trace.json chosen by --rank-file among a-rank-0.pt.trace.json, b-rank-0.pt.trace.json" d2.err
set +e; "$MAGPIE_BIN" -q benchmark --trace-dir dup -o bd > bd.txt 2>&1; rc=$?; set -e
test "$rc" -eq 1 && grep -q "Several trace files claim rank 0" bd.txt

# Ranks from two runs: another GPU and a time span that does not overlap rank 0's.
mkdir runs
cp "$r0" runs/x-rank-0.pt.trace.json
python3 - "$r1" runs/x-rank-1.pt.trace.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["deviceProperties"] = [{"name": "NVIDIA A100-SXM4-80GB"}]
for e in d["traceEvents"]:
    if "ts" in e:
        e["ts"] += 5e9
json.dump(d, open(sys.argv[2], "w"))
PY
"$MAGPIE_BIN" -q trace gap runs -o r > r.txt 2> r.err
grep -q "rank 1 (x-rank-1.pt.trace.json): its events .* do not overlap rank 0's .*: ranks from different runs?" r.err
echo "trace_rank_dirs: ok"
