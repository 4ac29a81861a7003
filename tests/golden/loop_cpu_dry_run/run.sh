#!/usr/bin/env bash
# The whole optimization loop on the CPU: examples/loop/run_loop.py --backend numpy drives the
# real magpie binary (benchmark client, profiled run, trace stages/report/gap/sources, compare,
# results compare) against the example server's numpy backend. Checks the report end to end,
# the source line against the file, then a second run whose only candidates are wrong stops
# at the correctness gate without switching. Needs python3 with numpy; no torch, no GPU.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
source "$MAGPIE_SOURCE_DIR/tests/golden/py_harness_protocol/find_python.sh"
py="$(magpie_find_numpy_python)" || { echo "SKIP: no python3 with numpy found"; exit 77; }
"$MAGPIE_BIN" benchmark --help 2>/dev/null | grep -- '--base-url' > /dev/null || { echo "SKIP: this magpie has no serving client (--base-url)"; exit 77; }
export MAGPIE_PYTHON="$py"
LOOP="$MAGPIE_SOURCE_DIR/examples/loop"
out="$GOLDEN_TMP/loop"
"$py" "$LOOP/run_loop.py" --magpie "$MAGPIE_BIN" --backend numpy --python "$py" --out "$out" --runs 3 \
  > "$GOLDEN_TMP/table.txt" 2> "$GOLDEN_TMP/loop.err" || { tail -40 "$GOLDEN_TMP/loop.err"; fail "run_loop.py exited $?"; }
cat "$GOLDEN_TMP/table.txt"
"$py" - "$out/loop_report.json" "$LOOP" <<'PY' || { tail -60 "$GOLDEN_TMP/loop.err"; fail "report check"; }
import json, os, re, sys
r = json.load(open(sys.argv[1])); loop = sys.argv[2]
assert r["outcome"] in ("improved", "stopped"), (r["outcome"], r.get("error"))
steps = list(r["steps"])
assert steps[:9] == ["start_server", "calibrate", "baseline_benchmarks", "profiled_run", "trace_analysis",
                     "choose_kernel", "compare", "switch_in", "after_benchmarks"], steps
assert all(r["steps"][s]["status"] == "ok" for s in steps[:9]), r["steps"]
# benchmarks: three a side, same inputs, real numbers
assert len(r["baseline_runs"]) == 3 and len(r["after_runs"]) == 3
fps = {x["fingerprint"] for x in r["baseline_runs"] + r["after_runs"]}
assert len(fps) == 1, fps
for x in r["baseline_runs"] + r["after_runs"]:
    m = x["metrics"]
    assert m["completed"] == r["num_prompts"] and m["failed"] == 0 and m["output_throughput"] > 0, m
# the chosen kernel is the top-ranked kernel of examples/loop, at the line its def is on
ch = r["chosen"]
ours = [k for k in r["ranking"] if k["disposition"] == "ours"]
assert ch["kernel"] == ours[0]["name"] and ch["rank"] == ours[0]["rank"], (ch, ours[:1])
assert all(k["disposition"] == "external" for k in r["ranking"][:ch["rank"] - 1])
lines = open(os.path.join(loop, os.path.basename(ch["file"]))).read().splitlines()
assert re.match(r"def %s\(" % re.escape(ch["kernel"]), lines[ch["line"] - 1]), (ch, lines[ch["line"] - 1])
assert lines[ch["line"] - 2].strip() == "@triton.jit"
# the winner passed the gate, is faster beyond its CI; wrong candidates were rejected
k = r["kernel"]
byid = {c["id"]: c for c in k["kernels"]}
assert byid[k["winner"]]["outcome"] == "passed" and k["ci_low"] > 1.0, k
for bad in ("silu_mul_swapped", "rotary_interleaved"):
    if bad in byid:
        assert byid[bad]["outcome"] == "incorrect", byid[bad]
assert r["switch"]["server"]["kernels"][ch["op"]] == k["impl"]
# end to end: both sides measured, a decision with its evidence
e = r["e2e"]["metrics"]["output_throughput"]
assert e["tested"] and e["n_before"] == 3 and e["n_after"] == 3 and "p_value" in e, e
if r["outcome"] == "stopped":
    assert r["stop"]["code"] in ("e2e_within_noise", "e2e_regression"), r["stop"]
else:
    assert e["beyond_noise"] and e["better"], e
assert os.path.exists(os.path.join(os.path.dirname(sys.argv[1]), "loop_report.md"))
print("ok: loop report", r["outcome"], ch["kernel"], "->", k["winner"], "%.3fx" % k["speedup"],
      "e2e %+.2f%%" % e["change_pct"])
PY
grep -q "chosen kernel" "$GOLDEN_TMP/table.txt" || fail "no summary table"

# Only wrong candidates: the loop stops at the gate (or has nothing to try) and never switches.
"$py" - "$LOOP/loop_config.json" "$GOLDEN_TMP/wrong.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["ops"]["rms_norm"]["candidates"] = {}
c["ops"]["silu_mul"]["candidates"] = {"silu_mul_swapped": "swapped"}
c["ops"]["rotary"]["candidates"] = {"rotary_interleaved": "interleaved"}
json.dump(c, open(sys.argv[2], "w"))
PY
"$py" "$LOOP/run_loop.py" --magpie "$MAGPIE_BIN" --backend numpy --python "$py" --out "$GOLDEN_TMP/wrong" --runs 2 \
  --config "$GOLDEN_TMP/wrong.json" > "$GOLDEN_TMP/wrong.txt" 2> "$GOLDEN_TMP/wrong.err" \
  || { cat "$GOLDEN_TMP/wrong.txt"; tail -30 "$GOLDEN_TMP/wrong.err"; fail "run_loop.py (wrong candidates) exited $?"; }
"$py" - "$GOLDEN_TMP/wrong/loop_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["outcome"] == "stopped", r["outcome"]
assert r["stop"]["code"] in ("no_candidates", "no_correct_candidate"), r["stop"]
assert "switch_in" not in r["steps"] and "after_runs" not in r, list(r["steps"])
print("ok: wrong candidates stop with", r["stop"]["code"])
PY
echo "ok: loop cpu dry run"
