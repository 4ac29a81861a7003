#!/usr/bin/env bash
# The whole optimization loop on the CPU: `magpie optimize -c examples/loop/optimize_cpu.yaml`
# drives the example server's numpy backend through every step (baseline server + warm-up,
# calibration, a benchmark, the profiled run, trace stages/report/gap/sources, kernel choice,
# magpie compare, switch-in, the interleaved A B B A A B series on freshly started servers, inputs
# check, Welch + magpie results compare; every series server's "engine: burst" step timing accounts
# for every request it served). Then, in the same series:
#   the A/A control (resumed from the first run's compare, concurrent servers) → within noise;
#   only wrong candidates → stops at the correctness gate without switching;
#   a server that cannot start → failed with server_failed, report written;
#   a candidate server that identifies differently → inputs_changed before any run;
#   a mapping below the confidence threshold → source_mapping_low_confidence;
#   Ctrl-C during the series → the step fails as interrupted, no server is left running.
# Needs python3 with numpy; no torch, no GPU.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
source "$MAGPIE_SOURCE_DIR/tests/golden/py_harness_protocol/find_python.sh"
py="$(magpie_find_numpy_python)" || { echo "SKIP: no python3 with numpy found"; exit 77; }
"$MAGPIE_BIN" optimize --help > /dev/null 2>&1 || { echo "SKIP: this magpie has no optimize subcommand"; exit 77; }
export MAGPIE_PYTHON="$py"
LOOP="$MAGPIE_SOURCE_DIR/examples/loop"
CFG="$LOOP/optimize_cpu.yaml"
out="$GOLDEN_TMP/loop"
no_server_left() {  # every server command holds --trace-dir <its workspace>/server_traces
  if pgrep -f -- "$1/server_traces" > /dev/null; then pgrep -af -- "$1/server_traces" >&2; fail "a server of $1 is still running"; fi
}

t0=$(date +%s)
"$MAGPIE_BIN" optimize -c "$CFG" --workspace "$out" --pairs 3 > "$GOLDEN_TMP/table.txt" 2> "$GOLDEN_TMP/loop.err" \
  || { tail -40 "$GOLDEN_TMP/loop.err"; fail "magpie optimize exited $?"; }
cat "$GOLDEN_TMP/table.txt"
echo "loop: $(( $(date +%s) - t0 )) s"
no_server_left "$out"
"$py" - "$out/loop_report.json" "$LOOP" <<'PY' || { tail -60 "$GOLDEN_TMP/loop.err"; fail "report check"; }
import json, os, re, sys
r = json.load(open(sys.argv[1])); loop = sys.argv[2]
assert r["outcome"] in ("improved", "stopped"), (r["outcome"], r.get("error"))
steps = list(r["steps"])
# a stop before the switch names its cause (a candidate's verdict and CI, or why it was not ranked)
assert "switch_in" in steps, ("stopped before switch_in", r.get("stop"), r.get("error"))
assert steps[:9] == ["start_server", "calibrate", "baseline_benchmarks", "profiled_run", "trace_analysis",
                     "choose_kernel", "compare", "switch_in", "after_benchmarks"], steps
assert all(r["steps"][s]["status"] == "ok" for s in steps[:9]), r["steps"]
# interleaved series: A B B A A B, each run on its own freshly started and warmed server
d = r["design"]
assert d["sequence"] == ["A", "B", "B", "A", "A", "B"], d
assert d["servers"] == "restart" and d["server_starts"] == 8, d  # baseline, B check, 6 runs
assert len(r["baseline_runs"]) == 3 and len(r["after_runs"]) == 3
tags = [x["server"] for x in r["baseline_runs"] + r["after_runs"]]
assert len(set(tags)) == 6, tags
for t in tags:
    assert t in r["warmups"], ("no warm-up pass for", t)
fps = {x["fingerprint"] for x in r["baseline_runs"] + r["after_runs"]}
assert len(fps) == 1, fps
for x in r["baseline_runs"] + r["after_runs"] + r["initial_runs"]:
    m = x["metrics"]
    assert m["completed"] == r["num_prompts"] and m["failed"] == 0 and m["output_throughput"] > 0, m
# the example server times every engine step: its log's burst lines account for every request it
# served (2 client warm-up requests before the warm-up pass and before the run, the pass, the run)
logs = {sv["tag"]: sv["log"] for sv in r["servers"]}
for t in tags:
    bursts = [l for l in open(logs[t]) if l.startswith("engine: burst ")]
    nreq = sum(int(re.match(r"engine: burst \d+: (\d+) req ", l).group(1)) for l in bursts)
    assert nreq == 2 + r["warmups"][t]["num_prompts"] + 2 + r["num_prompts"], (t, nreq, bursts)
    assert all(" 0 new attention shapes " in l for l in bursts), bursts  # numpy: no attention plans
# the chosen kernel is the top-ranked kernel of examples/loop, at the line its def is on
ch = r["chosen"]
ours = [k for k in r["ranking"] if k["disposition"] == "ours"]
assert ch["kernel"] == ours[0]["name"] and ch["rank"] == ours[0]["rank"], (ch, ours[:1])
assert all(k["disposition"] == "external" for k in r["ranking"][:ch["rank"] - 1])
lines = open(os.path.join(loop, ch["file"])).read().splitlines()
assert re.match(r"def %s\(" % re.escape(ch["kernel"]), lines[ch["line"] - 1]), (ch, lines[ch["line"] - 1])
assert lines[ch["line"] - 2].strip() == "@triton.jit"
assert 0 < ch["op_share_pct"] <= 100, ch
# the winner passed the gate, is faster beyond its CI; wrong candidates were rejected
k = r["kernel"]
byid = {c["id"]: c for c in k["kernels"]}
assert byid[k["winner"]]["outcome"] == "passed" and k["ci_low"] > 1.0, k
for bad in ("silu_mul_swapped", "rotary_interleaved", "attention_offbyone"):
    if bad in byid:
        assert byid[bad]["outcome"] == "incorrect", byid[bad]
assert r["switch"]["server"]["kernels"][ch["op"]] == k["impl"]
# end to end: both tests, the smallest detectable change, the kernel's prediction
e = r["e2e"]["metrics"]["output_throughput"]
assert e["tested"] and e["n_before"] == 3 and e["n_after"] == 3 and "p_value" in e and e["mde_pct"] > 0, e
assert r["e2e"]["magpie_results_compare"]["name"] == "throughput.output_throughput", r["e2e"]
assert r["power"]["n_per_side"] == 3 and r["power"]["mde_pct"]["output_throughput"] == e["mde_pct"]
p = r["prediction"]
assert p["kernel_speedup"] == k["speedup"] and p["gpu_time_change_pct"] < 0, p
if r["outcome"] == "stopped":
    assert r["stop"]["code"] in ("e2e_within_noise", "e2e_regression"), r["stop"]
else:
    assert e["beyond_noise"] and e["better"], e
names = [c["name"] for c in r["commands"]]
for n in ("trace_stages", "trace_report", "gap_analysis", "trace_sources", "compare", "results_compare"):
    assert n in names, (n, names)
md = open(os.path.join(os.path.dirname(sys.argv[1]), "loop_report.md")).read()
assert "| why not ranked |" in md, md
for c in k["kernels"]:  # a wrong candidate's row says why it is not ranked
    if c["outcome"] == "incorrect":
        assert "| %s | incorrect | not_ranked |" % c["id"] in md and c["reason"].startswith("incorrect"), (c, md)
print("ok: loop report", r["outcome"], ch["kernel"], "->", k["winner"], "%.3fx" % k["speedup"], "e2e %+.2f%%" % e["change_pct"])
PY
grep -q "kernel gain predicts" "$GOLDEN_TMP/table.txt" || fail "no summary table"

# The A/A control in the same series: the candidate side runs the baseline variant. Its power
# target (0.001%) is out of reach, so pairs beyond the 3rd would be added up to 5, but the series'
# time budget (1 s) is spent after the 3rd: the series ends there and says why.
t0=$(date +%s)
"$MAGPIE_BIN" optimize -c "$CFG" --workspace "$GOLDEN_TMP/aa" --resume "$out" --from-step switch_in --control aa \
  --servers concurrent --alpha 0.01 --max-pairs 5 --target-mde-pct 0.001 --max-series-s 1 \
  > "$GOLDEN_TMP/aa.txt" 2> "$GOLDEN_TMP/aa.err" \
  || { cat "$GOLDEN_TMP/aa.txt"; tail -30 "$GOLDEN_TMP/aa.err"; fail "A/A control exited $?"; }
echo "A/A control: $(( $(date +%s) - t0 )) s"
no_server_left "$GOLDEN_TMP/aa"
"$py" - "$GOLDEN_TMP/aa/loop_report.json" <<'PY' || { cat "$GOLDEN_TMP/aa.txt"; fail "A/A report"; }
import json, sys
r = json.load(open(sys.argv[1]))
assert r["control"] == "aa" and r["switch"]["variant"] == "baseline", r["switch"]
assert all(r["steps"][s].get("resumed") for s in ("start_server", "compare")), r["steps"]
assert r["design"]["servers"] == "concurrent" and r["design"]["server_starts"] == 2, r["design"]
assert {x["server"] for x in r["baseline_runs"]} == {"A"} and {x["server"] for x in r["after_runs"]} == {"B"}
assert r["outcome"] == "stopped" and r["stop"]["code"] == "e2e_within_noise", (r["outcome"], r["stop"])
assert r["control_result"].startswith("passed"), r["control_result"]
d = r["design"]
assert d["pairs"] == 3 and len(r["after_runs"]) == 3 and d["max_series_s"] == 1 and d["seconds"] > 1, d
assert "max_series_s 1" in d["budget_stop"] and r["power"]["reached"] is False, (d, r["power"])
print("ok: A/A control within noise:", r["stop"]["message"][:120])
PY

# Configs with absolute paths (the tests write no file into examples/loop).
variant() {  # variant NAME PYTHON-EXPRESSION-ON-TEXT
  "$py" - "$CFG" "$GOLDEN_TMP/$1.yaml" "$LOOP" "$2" <<'PY'
import sys
text, dst, loop, expr = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], sys.argv[4]
text = text.replace("compare: compare_", "compare: %s/compare_" % loop).replace("{config_dir}", loop)
text = text.replace('repos: ["."]', 'repos: ["%s"]' % loop)
open(dst, "w").write(eval(expr, {"text": text, "loop": loop}))
PY
}

# Only wrong candidates: the loop stops at the gate (or has nothing to try) and never switches.
variant wrong 'text.replace("{attention_split: split, attention_offbyone: offbyone}", "{attention_offbyone: offbyone}").replace("{rms_norm_onepass: onepass}", "{}").replace("{silu_mul_2d: 2d, silu_mul_swapped: swapped}", "{silu_mul_swapped: swapped}").replace("{rotary_fused: fused, rotary_interleaved: interleaved}", "{rotary_interleaved: interleaved}")'
"$MAGPIE_BIN" optimize -c "$GOLDEN_TMP/wrong.yaml" --workspace "$GOLDEN_TMP/wrong" --resume "$out" --from-step compare \
  > "$GOLDEN_TMP/wrong.txt" 2> "$GOLDEN_TMP/wrong.err" || { cat "$GOLDEN_TMP/wrong.txt"; tail -30 "$GOLDEN_TMP/wrong.err"; fail "wrong candidates: exit $?"; }
check_json "$GOLDEN_TMP/wrong/loop_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["outcome"] == "stopped", r["outcome"]
assert r["stop"]["code"] in ("no_candidates", "no_correct_candidate"), r["stop"]
assert r["stop"]["category"] in ("nothing to try", "correctness unproven"), r["stop"]
assert "switch_in" not in r["steps"] and "after_runs" not in r, list(r["steps"])
print("ok: wrong candidates stop with", r["stop"]["code"])
PY

# A server that cannot start: a failed step, named, with the report written.
variant dead 'text.replace("\"%s/server.py\"" % loop, "\"-c\", \"import sys; sys.exit(3)\"")'
rc=0
"$MAGPIE_BIN" optimize -c "$GOLDEN_TMP/dead.yaml" --workspace "$GOLDEN_TMP/dead" > /dev/null 2> "$GOLDEN_TMP/dead.err" || rc=$?
[ "$rc" = 1 ] || { tail -20 "$GOLDEN_TMP/dead.err"; fail "a server that cannot start: exit $rc, want 1"; }
check_json "$GOLDEN_TMP/dead/loop_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["outcome"] == "failed" and r["error_code"] == "server_failed", (r["outcome"], r.get("error"))
assert r["steps"]["start_server"]["status"] == "failed" and "exited" in r["error"], r["error"]
print("ok: dead server ->", r["error"][:100])
PY

# A candidate server whose identity differs from the baseline's: inputs_changed before any run.
variant ident 'text.replace("identity_keys: [model_config, weights_sha256]", "identity_keys: [model_config, kernel_spec]")'
"$MAGPIE_BIN" optimize -c "$GOLDEN_TMP/ident.yaml" --workspace "$GOLDEN_TMP/ident" --resume "$out" --from-step switch_in \
  > /dev/null 2> "$GOLDEN_TMP/ident.err" || { tail -20 "$GOLDEN_TMP/ident.err"; fail "identity: exit $?"; }
no_server_left "$GOLDEN_TMP/ident"
check_json "$GOLDEN_TMP/ident/loop_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["outcome"] == "stopped" and r["stop"]["code"] == "inputs_changed", r["stop"]
assert r["stop"]["details"]["key"] == "kernel_spec" and "after_benchmarks" not in r["steps"], r["stop"]
print("ok: identity mismatch ->", r["stop"]["message"])
PY

# Ctrl-C during the series: the step fails as interrupted, the report is written, no server is left.
"$MAGPIE_BIN" optimize -c "$CFG" --workspace "$GOLDEN_TMP/int" --resume "$out" --from-step switch_in \
  > /dev/null 2> "$GOLDEN_TMP/int.err" &
pid=$!
for _ in $(seq 1 600); do
  grep -q '"step": "after_benchmarks"' "$GOLDEN_TMP/int/loop_report.json" 2>/dev/null && break
  sleep 0.1
done
sleep 1
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 1 ] || { tail -20 "$GOLDEN_TMP/int.err"; fail "Ctrl-C: exit $rc, want 1"; }
no_server_left "$GOLDEN_TMP/int"
check_json "$GOLDEN_TMP/int/loop_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["outcome"] == "failed" and "interrupted" in r.get("interrupted", ""), (r["outcome"], r.get("interrupted"))
assert r["steps"]["after_benchmarks"]["status"] == "failed", r["steps"]
assert isinstance(r["baseline_runs"], list) and r["design"]["sequence"] == ["A", "B"][:len(r["design"]["sequence"])], r["design"]
print("ok: Ctrl-C ->", r["error"][:100])
PY

# A mapping below the confidence threshold (the mapper's answer for the chosen kernel lowered).
"$py" - "$out/loop_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
p = r["analysis"]["sources_json"]
s = json.load(open(p))
for k in s.get("kernels", []):
    if k.get("name") == r["chosen"]["kernel"]:
        k["confidence"] = 0.5
json.dump(s, open(p, "w"))
PY
"$MAGPIE_BIN" optimize -c "$CFG" --workspace "$GOLDEN_TMP/low" --resume "$out" --from-step choose_kernel \
  > /dev/null 2> "$GOLDEN_TMP/low.err" || { tail -20 "$GOLDEN_TMP/low.err"; fail "low confidence: exit $?"; }
check_json "$GOLDEN_TMP/low/loop_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["outcome"] == "stopped" and r["stop"]["code"] == "source_mapping_low_confidence", r["stop"]
assert r["stop"]["category"] == "source mapping uncertain" and "compare" not in r["steps"]
print("ok: low confidence ->", r["stop"]["message"][:100])
PY
echo "ok: loop cpu dry run"
