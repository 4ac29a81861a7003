#!/usr/bin/env bash
# magpie trace on synthetic edge cases: overlapping compute / communication / memcpy, nested
# ops and graph launches, two ranks, a bare-list root, truncated gzip, and an inference trace
# without step annotations (split from op patterns).
set -euo pipefail
: "${MAGPIE_BIN:?}" "${MAGPIE_SOURCE_DIR:?}"
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
fx="$MAGPIE_SOURCE_DIR/tests/fixtures/traces"
export MAGPIE_DATA_DIR="$MAGPIE_SOURCE_DIR/data"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cd "$work"

# Overlaps: exact timeline rows (µs fixture → ms).
"$MAGPIE_BIN" -q trace timeline "$fx/overlaps.json" > tl.txt
grep -Eq "^computation_time +0\.1500 +42\.86$" tl.txt
grep -Eq "^exposed_comm_time +0\.1000 +28\.57$" tl.txt
grep -Eq "^exposed_memcpy_time +0\.0600 +17\.14$" tl.txt
grep -Eq "^idle_time +0\.0400 +11\.43$" tl.txt
"$MAGPIE_BIN" -q trace report "$fx/overlaps.json" -o ov --json > ov.json
python3 - ov.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
t = j["trace"]
assert t["gpu_unlinked"] == 1 and t["linking_key"] == "correlation", t
ops = {o["name"]: o for o in j["analysis"]["ops"]}
assert "aten::linear" not in ops and ops["aten::addmm"]["gflops"] == (2 * 64 * 256 * 128 + 64 * 256) / 1e9
assert ops["aten::addmm"]["roofline"]["bound"] in ("MEMORY_BOUND", "COMPUTE_BOUND")
assert "cudaGraphLaunch->graph_kernel_b (Synthetic Op)" in ops
cats = {k["name"]: k["category"] for k in j["analysis"]["kernels"]}
assert cats["ncclDevKernel_AllReduce_Sum_bf16_RING_LL"] == "communication"
assert cats["Memcpy DtoH (Device -> Pinned)"] == "memcpy"
PY

# Two ranks through magpie trace gap (explicit -o) with per-rank CSVs.
"$MAGPIE_BIN" -q trace gap "$fx/two_ranks" -o g2 > g2.txt
grep -q "^Ranks analyzed: 2$" g2.txt
test -s g2/gap_analysis/gap_analysis_rank1.csv
"$MAGPIE_BIN" -q trace gap "$fx/two_ranks" -o g2 --json | python3 -c "import json,sys; j=json.load(sys.stdin); assert j['num_ranks']==2 and j['total_duration_us']==140.0, j"

# Bare-list root.
mkdir bl && cp "$fx/bare_list.json" bl/
"$MAGPIE_BIN" -q trace gap bl -o b > bl.txt
grep -q "Total duration: 6.00 us" bl.txt

# Truncated gzip: partial results plus the reason (exit 3, partial input); never a crash.
mkdir tr && cp "$fx/truncated.json.gz" tr/
set +e; "$MAGPIE_BIN" -q trace gap tr -o t > tr.txt 2>&1; rc=$?; set -e
test "$rc" -eq 3
grep -q "truncated gzip stream" tr.txt
set +e; "$MAGPIE_BIN" -q trace timeline "$fx/truncated.json.gz" > /dev/null 2> tr_err.txt; rc=$?; set -e
test "$rc" -eq 3
grep -q "truncated gzip stream" tr_err.txt

# No step annotations: split from op patterns (first root op of each forward).
python3 - "$MAGPIE_SOURCE_DIR/examples/traces/llama_tiny-rank-0.pt.trace.json.gz" noann.pt.trace.json.gz <<'PY'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
d["traceEvents"] = [e for e in d["traceEvents"] if e.get("cat") not in ("user_annotation", "gpu_user_annotation")]
json.dump(d, gzip.open(sys.argv[2], "wt"))
PY
"$MAGPIE_BIN" -q trace stages noann.pt.trace.json.gz -o pat --json > pat.json
python3 - pat.json <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
assert b["split_source"] == "forward_pattern" and b["phase_method"] == "attention", b["split_source"]
pre, dec = b["phase_picks"]["prefill"], b["phase_picks"]["decode"]
assert pre["batch_size"] == 96, pre          # the 2x48-token prompt
assert dec["batch_size"] == 2, dec           # two decode tokens per step
assert "error" in b["stage_results"]["prefilldecode"]  # not separable without annotations
PY
echo "trace_fixtures: ok"
