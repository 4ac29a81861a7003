#!/usr/bin/env bash
# analyze on the host examples: a correct kernel passes (exit 0), the off-by-one one is
# rejected by the output comparison (exit 1); Magpie's report keys and ours are present.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
EX="$MAGPIE_SOURCE_DIR/examples/host"
out="$GOLDEN_TMP/res"
"$MAGPIE_BIN" analyze -k "$EX/analyze.yaml" -o "$out" --max-time 1 --min-time 0.05 > "$GOLDEN_TMP/ok.txt" \
  || fail "analyze of the correct kernel exited $?"
grep -q "Correctness: SUCCESS (outputs)" "$GOLDEN_TMP/ok.txt" || fail "console block lacks the correctness line"
grep -q "^Workspace: " "$GOLDEN_TMP/ok.txt" || fail "console lacks Workspace:"
ws=$(workspace_of "$out" analyze_vector_add_unrolled)
[ -f "$ws/analyze_report.json" ] || fail "no analyze_report.json in $ws"
[ -f "$ws/config.yaml" ] || fail "no config.yaml snapshot"
check_json "$ws/analyze_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for key in ("mode", "timestamp", "summary", "results", "run_seed", "reference"):
    assert key in r, key
assert r["mode"] == "analyze"
res = r["results"][0]
for key in ("compiling_state", "correctness_state", "performance_state", "latency_state", "errors", "score",
            "compiling_result", "correctness_result", "performance_result", "latency_result", "extra",
            "correctness_method", "correctness", "timing", "outcome"):
    assert key in res, key
assert res["correctness_state"] == "SUCCESS" and res["correctness_method"] == "outputs", res["correctness_state"]
assert res["outcome"] == "passed"
assert res["extra"] == {"kernel_id": "vector_add_unrolled", "kernel_type": "HOST"}
assert res["score"] == 1.0, res["score"]
c = res["correctness"]
assert c["reference"] == "vector_add" and len(c["seeds"]) == 5
trials = c["comparison"]["trials"]
assert len(trials) == 5 and all(t["passed"] for t in trials)
assert c["timed_size"] in c["sizes_checked"]
t = res["timing"]
assert t["success"] and t["source"] == "host_clock" and t["stats_ns"]["median"] > 0
assert t["stop_reason"] in ("noise_target_met", "noise_converged", "time_budget", "max_samples")
assert t["policy"]["cold"] is True and t["policy"]["min_samples"] == 10
assert res["performance_result"]["summary"]["kernel_time_median"]["unit"] == "us"
PY
set +e
"$MAGPIE_BIN" analyze -k "$EX/analyze_offbyone.yaml" -o "$out" --no-perf > "$GOLDEN_TMP/bad.txt"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "analyze of the off-by-one kernel exited $rc, expected 1"
ws=$(workspace_of "$out" analyze_vector_add_offbyone)
check_json "$ws/analyze_report.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"][0]
assert res["correctness_state"] == "FAILED" and res["outcome"] == "incorrect", res["outcome"]
assert res["performance_state"] == "SKIPPED"
assert res["score"] == 0.0
assert any("NaN/inf pattern" in e or "outside atol" in e for e in res["errors"]), res["errors"]
bad = [t for t in res["correctness"]["comparison"]["trials"] if not t["passed"]]
assert bad and all(t["size"] != "n=1024" for t in bad), [t["size"] for t in bad]
PY
echo "ok: analyze host golden"
