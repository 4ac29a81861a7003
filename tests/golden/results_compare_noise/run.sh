#!/usr/bin/env bash
# `magpie results register|list|show|compare` on benchmark workspaces: a 5 % throughput change
# is "beyond noise" only when repeated runs of each configuration support it.
set -euo pipefail
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
# The store these commands use by default is the per-user one: point it at ./results's database.
store_here() { export MAGPIE_RESULTS="$PWD/results/magpie_results.sqlite"; }
store_here
mk() {  # mk <dir> <output_throughput> <model>
  mkdir -p "results/$1"
  cat > "results/$1/benchmark_report.json" <<J
{"success": true, "framework": "vllm", "model": "$3",
 "config": {"framework": "vllm", "model": "$3", "envs": {"CONC": 32}, "output_dir": "results"},
 "throughput": {"request_throughput": 1.0, "output_throughput": $2, "completed_requests": 40},
 "latency": {"ttft": {"mean_ms": 50.0, "median_ms": 48.0, "p99_ms": 90.0}}}
J
}
mk benchmark_vllm_20260101_000001 1000 base
mk benchmark_vllm_20260101_000101 1050 cand
"$MAGPIE_BIN" results register results/benchmark_vllm_20260101_000001 results/benchmark_vllm_20260101_000101 > reg.txt
test -f results/magpie_results.sqlite
"$MAGPIE_BIN" results compare 1 2 --json > single.json
"$MAGPIE_BIN" results compare 1 2 > single.txt
# Quiet replicates (±0.3 %) of both configurations.
mk benchmark_vllm_20260101_000002 1003 base
mk benchmark_vllm_20260101_000003 997 base
mk benchmark_vllm_20260101_000102 1052 cand
mk benchmark_vllm_20260101_000103 1047 cand
"$MAGPIE_BIN" results register results/benchmark_vllm_20260101_00000[23] results/benchmark_vllm_20260101_00010[23] > /dev/null
"$MAGPIE_BIN" results compare results/benchmark_vllm_20260101_000001 results/benchmark_vllm_20260101_000101 --json > quiet.json
"$MAGPIE_BIN" results compare 1 2 --no-replicates --json > named.json
# Noisy replicates (±6 %) in a second database: the same 5 % mean change is within noise.
mkdir noisy && cd noisy
store_here
mk benchmark_vllm_20260102_000001 940 base
mk benchmark_vllm_20260102_000002 1000 base
mk benchmark_vllm_20260102_000003 1060 base
mk benchmark_vllm_20260102_000101 990 cand
mk benchmark_vllm_20260102_000102 1050 cand
mk benchmark_vllm_20260102_000103 1110 cand
"$MAGPIE_BIN" results register results/benchmark_* > /dev/null
"$MAGPIE_BIN" results compare 1 4 --json -m output_throughput > ../noisy.json
"$MAGPIE_BIN" results list --json > ../list.json
"$MAGPIE_BIN" results show 4 --json > ../show.json
cd ..
store_here
set +e
"$MAGPIE_BIN" results show 999 > /dev/null 2> missing.err; rc_missing=$?
"$MAGPIE_BIN" results frobnicate > /dev/null 2>&1; rc_action=$?
set -e
python3 - "$rc_missing" "$rc_action" <<'PY'
import json, sys
fail = []
def expect(c, w):
    if not c: fail.append(w)
def tp(f):
    return {m["metric"]: m for m in json.load(open(f))["metrics"]}["throughput.output_throughput"]
s = tp("single.json")
expect(abs(s["ratio"] - 1.05) < 1e-9 and s["beyond_noise"] is None and s["verdict"] == "insufficient_data", s)
expect("unknown" in open("single.txt").read() and "insufficient_data" in open("single.txt").read(), "table")
q = tp("quiet.json")
expect(q["beyond_noise"] is True and q["verdict"] == "improved" and q["n_a"] == 3 and q["n_b"] == 3, q)
expect(q["run_to_run"]["method"] == "welch_t" and q["run_to_run"]["p_value"] < 0.01, q["run_to_run"])
n = tp("named.json")
expect(n["n_a"] == 1 and n["beyond_noise"] is None, "--no-replicates uses the named runs only")
z = tp("noisy.json")
expect(abs(z["ratio"] - 1.05) < 1e-9 and z["beyond_noise"] is False and z["verdict"] == "no_significant_change", z)
expect(len(json.load(open("noisy.json"))["metrics"]) == 1, "--metric filter")
lst = json.load(open("list.json"))
expect(len(lst) == 6 and lst[0]["timestamp"] >= lst[-1]["timestamp"], "list newest first")
sh = json.load(open("show.json"))
expect(sh["replicates"] == [4, 5, 6] and any(m["name"] == "throughput.output_throughput" and m["direction"] == "higher"
                                             for m in sh["metrics"]), sh)
rc_missing, rc_action = map(int, sys.argv[1:])
expect(rc_missing == 1 and "no run '999'" in open("missing.err").read(), "missing run")
expect(rc_action == 2, "unknown action is a usage error")
for f in fail: print("FAIL:", f)
print("all checks passed" if not fail else "%d failed" % len(fail))
sys.exit(1 if fail else 0)
PY
