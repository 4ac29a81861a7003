#!/usr/bin/env bash
# No quiet failures (issue 16 §1): every hostile input gives the documented exit code, a
# stderr line that names the problem with counts, and (when something could be analysed) a
# report that says "partial". Exit codes: 1 nothing to analyse, 3 read only partly (0 with
# --allow-partial).
set -euo pipefail
: "${MAGPIE_BIN:?}" "${MAGPIE_SOURCE_DIR:?}"
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
export MAGPIE_DATA_DIR="$MAGPIE_SOURCE_DIR/data"
real="$MAGPIE_SOURCE_DIR/examples/traces/llama_tiny-rank-0.pt.trace.json.gz"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cd "$work"

# expect CODE STDERR_REGEX -- magpie args...
expect() {
  local want="$1" pattern="$2"; shift 3
  set +e; "$MAGPIE_BIN" -q "$@" > out.txt 2> err.txt; local rc=$?; set -e
  local seen=1
  if [ -z "$pattern" ]; then [ ! -s err.txt ] || seen=0; else grep -Eq -- "$pattern" err.txt || seen=0; fi
  if [ "$rc" -ne "$want" ] || [ "$seen" -eq 0 ]; then
    echo "FAILED: magpie $* -> exit $rc (want $want), stderr:"; cat err.txt; exit 1
  fi
}

python3 - "$real" <<'PY'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
ev = d["traceEvents"]
raw = gzip.open(sys.argv[1]).read()
c = gzip.compress(raw)
open("truncated.json.gz", "wb").write(c[: len(c) * 85 // 100])
open("empty.json", "w").close()
open("garbage.json", "wb").write(bytes(range(256)) * 8)
open("list.json", "w").write("[]")
cpu = dict(d, traceEvents=[e for e in ev if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset")])
json.dump(cpu, open("no_gpu.json", "w"))
nodur = [dict(e) for e in ev]
gpu = [e for e in nodur if e.get("cat") == "kernel"]
for e in gpu[::2]:
    e.pop("dur")
json.dump(dict(d, traceEvents=nodur), open("no_dur.json", "w"))
open("no_dur.count", "w").write(str(len(gpu[::2])))
bad = [dict(e) for e in ev]
k = [e for e in bad if e.get("cat") == "kernel"]
k[0]["dur"] = -5.0
k[1]["dur"] = "12"
k[2]["ts"] = None
bad.append(42)
json.dump(dict(d, traceEvents=bad), open("bad_fields.json", "w"))
PY
mkdir adir

# Nothing to analyse: exit 1, a message, no output directory.
expect 1 "the file is empty" -- trace report empty.json -o r_empty
test ! -e r_empty
expect 1 "not a readable trace: root is neither an object nor a list" -- trace report garbage.json -o r_garbage
expect 1 "the trace holds no events" -- trace report list.json -o r_list
expect 1 "adir: no trace files" -- trace report adir -o r_dir   # a directory is read as one of traces (issue 33)
expect 1 "no GPU events \(cat kernel, gpu_memcpy, gpu_memset\)" -- trace report no_gpu.json -o r_nogpu
expect 1 "no GPU events" -- trace timeline no_gpu.json
expect 1 "the file is empty" -- trace roofline empty.json
expect 1 "the trace holds no events" -- trace stages list.json -o st_list
for f in empty.json garbage.json list.json; do mkdir -p "g_$f" && cp "$f" "g_$f/x-rank-0.pt.trace.json"; done
expect 1 "Rank 0 \(x-rank-0.pt.trace.json\): the file is empty" -- trace gap g_empty.json -o g1
grep -q "No kernel events found in traces." out.txt

# Read only partly: outputs written and marked partial, exit 3; --allow-partial: exit 0.
expect 3 "reading stopped early: truncated gzip stream .* at byte [0-9]+; only the [0-9]+ events before it are analysed" \
  -- trace report truncated.json.gz -o r_trunc
python3 -c "import json; j=json.load(open('r_trunc/report.json')); assert j['input']['status']=='partial', j['input']"
grep -q "id='input-problems'" r_trunc/report.html
python3 - r_trunc/report.html <<'PY'
import sys
h = open(sys.argv[1]).read()
assert h.index("input-problems") < h.index("<svg"), "read errors must come first"
assert "truncated gzip stream" in h
PY
expect 0 "truncated gzip stream" -- trace report truncated.json.gz -o r_trunc2 --allow-partial
expect 3 "truncated gzip stream" -- trace timeline truncated.json.gz
mkdir tr_dir && cp truncated.json.gz tr_dir/x-rank-0.pt.trace.json.gz
expect 3 "Rank 0 \(x-rank-0.pt.trace.json.gz\): reading stopped early: truncated gzip stream" -- trace gap tr_dir -o g2
test -s g2/gap_analysis/gap_analysis.csv
expect 0 "truncated gzip stream" -- trace gap tr_dir -o g3 --allow-partial
expect 3 "truncated gzip stream" -- benchmark --trace-dir tr_dir -o g4

# Kernels without dur are said with counts (they used to vanish from busy time silently).
n=$(cat no_dur.count)
expect 3 "$n of [0-9]+ GPU events without a usable \"dur\": kept as 0 µs" -- trace report no_dur.json -o r_nodur
expect 3 "$n of [0-9]+ counted events without a usable \"dur\" \(counted as 0 us\)" -- trace gap no_dur.json -o g5

# Negative / string dur, null ts and a non-object element: each counted and said.
expect 3 "1 event has a negative \"dur\"" -- trace report bad_fields.json -o r_bad
for pat in '1 event has a "dur" that is not a number' '1 event has a "ts" that is not a number' \
           '1 element of traceEvents not an object' '1 kernel / op / runtime event without a usable "ts" dropped'; do
  grep -qF "$pat" err.txt || { echo "missing: $pat"; cat err.txt; exit 1; }
done
python3 - r_bad/report.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
r = j["trace"]["read"]
assert (r["events_bad_ts"], r["events_bad_dur"], r["events_negative_dur"], r["non_object_elements"]) == (1, 1, 1, 1), r
assert j["input"]["status"] == "partial" and len(j["input"]["problems"]) == 6, j["input"]
PY

# A clean trace stays quiet and exits 0.
expect 0 "" -- trace report "$real" -o r_ok --no-html
python3 -c "import json; j=json.load(open('r_ok/report.json')); assert j['input']=={'status':'ok','problems':[]}, j['input']"
echo "trace_hostile: ok"
