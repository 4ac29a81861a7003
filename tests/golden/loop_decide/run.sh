#!/usr/bin/env bash
# The loop's kernel choice on a real trace, and the example's configuration against its code:
#  1. `magpie optimize --resume <a report whose profiled run is the shipped H200 trace>
#     --from-step trace_analysis --until choose_kernel`: the real gap analysis and source mapper
#     rank ATen, nvjet and cuDNN kernels above the one Triton kernel of examples/traces; the
#     choice skips exactly those and maps it to its file (the loop then pauses, exit 0).
#  2. optimize.yaml / optimize_cpu.yaml (via --dry-run): every op's kernels are the @triton.jit
#     defs of kernels_baseline.py, every candidate is in its compare YAML and is an
#     implementation ops.py knows; ops.parse_spec accepts and rejects what it should.
# The decisions themselves (every stop reason) are unit tests: tests/unit/optimize.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
"$MAGPIE_BIN" optimize --help > /dev/null 2>&1 || { echo "SKIP: this magpie has no optimize subcommand"; exit 77; }
src="$MAGPIE_SOURCE_DIR"
hand="$GOLDEN_TMP/hand"
mkdir -p "$hand"
python3 - "$GOLDEN_TMP/traces.yaml" "$src" <<'PY'
import sys
src = sys.argv[2]
open(sys.argv[1], "w").write("""optimize:
  name: traces
  workload: {random_input_len: 256, random_output_len: 64, max_concurrency: 16}
  server: {command: ["true", "{variant}"]}
  sources: {repos: ["%s/examples/traces"]}
  gap: {start_pct: 0, end_pct: 100, top_k: 60}
  ops:
    residual_scale: {compare: "%s/examples/loop/compare_rms_norm_cpu.yaml", baseline_id: rms_norm_baseline,
                     kernels: [residual_scale_kernel], candidates: {rms_norm_onepass: onepass}}
""" % (src, src))
PY
python3 - "$hand/loop_report.json" "$src/examples/traces/llama_tiny-rank-0.pt.trace.json.gz" <<'PY'
import json, sys
ok = {"status": "ok", "seconds": 0}
json.dump({"steps": {s: ok for s in ("start_server", "calibrate", "baseline_benchmarks", "profiled_run")},
           "server_baseline": {}, "num_prompts": 16, "profile": {"trace": sys.argv[2]}, "commands": []},
          open(sys.argv[1], "w"))
PY
"$MAGPIE_BIN" optimize -c "$GOLDEN_TMP/traces.yaml" --workspace "$GOLDEN_TMP/choice" --resume "$hand" \
  --from-step trace_analysis --until choose_kernel > "$GOLDEN_TMP/choice.txt" 2> "$GOLDEN_TMP/choice.err" \
  || { tail -30 "$GOLDEN_TMP/choice.err"; fail "optimize --until choose_kernel exited $?"; }
check_json "$GOLDEN_TMP/choice/loop_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["outcome"] == "paused" and r["paused_after"] == "choose_kernel", (r["outcome"], r.get("error"))
assert r["steps"]["profiled_run"]["resumed"] and r["steps"]["trace_analysis"]["status"] == "ok"
ch = r["chosen"]
assert (ch["kernel"], ch["op"], ch["file"]) == ("residual_scale_kernel", "residual_scale", "gen_trace.py"), ch
assert ch["rank"] > 1 and ch["line"] > 0, ch
cl = r["ranking"]
assert all(x["disposition"] == "external" for x in cl[:ch["rank"] - 1]), [x["disposition"] for x in cl[:ch["rank"]]]
totals = [x["total_us"] for x in cl]
assert totals == sorted(totals, reverse=True), totals
assert "compare" not in r["steps"]
print("ok: chose", ch["kernel"], "at rank", ch["rank"], "->", ch["file"], ch["line"])
PY
grep -q "chosen kernel" "$GOLDEN_TMP/choice.txt" || fail "no summary table"

cd "$src/examples/loop"
for cfg in optimize.yaml optimize_cpu.yaml; do
  "$MAGPIE_BIN" optimize -c "$cfg" --dry-run > "$GOLDEN_TMP/plan.json" || fail "$cfg: --dry-run exited $?"
  python3 - "$GOLDEN_TMP/plan.json" "$cfg" <<'PY' || fail "$cfg does not match the example's code"
import json, re, sys
plan, cfg = json.load(open(sys.argv[1])), sys.argv[2]
backend = "numpy" if "cpu" in cfg else "torch"
sys.path.insert(0, ".")
import ops
text = open("kernels_baseline.py").read()
defs = set(re.findall(r"@triton\.jit\s*\ndef (\w+)\(", text))
kernels = {k for o in plan["ops"].values() for k in o["kernels"]}
assert kernels == defs, (kernels ^ defs)
assert set(plan["ops"]) == set(ops.OP_NAMES), (set(plan["ops"]), ops.OP_NAMES)
for op, oc in plan["ops"].items():
    ids = re.findall(r"\bid: (\w+)", open(oc["compare"]).read())
    assert oc["baseline_id"] in ids, (cfg, op)
    for cid, impl in oc["candidates"].items():
        assert cid in ids, (cfg, op, cid)
        assert impl in ops.IMPLS[backend][op], (backend, op, impl)
cmd = plan["server_commands"]["baseline"]
assert "baseline" in cmd and not any("{" in a for a in cmd), cmd
assert plan["e2e"]["pairs"] >= 2 and plan["decision"]["metrics"]
print("ok:", cfg, "matches kernels_baseline.py, the compare YAMLs and ops.py")
PY
done
python3 - <<'PY'
import ops
assert ops.parse_spec("baseline") == {"rms_norm": "baseline", "silu_mul": "baseline", "rotary": "baseline",
                                      "attention": "baseline"}
assert ops.parse_spec("eager,rotary=fused")["rotary"] == "fused"
assert ops.parse_spec("eager,rotary=fused")["rms_norm"] == "eager"
assert ops.parse_spec("baseline,attention=split")["attention"] == "split"
for bad in ("fast", "rms_norm=nope", "gelu=eager"):
    try:
        ops.parse_spec(bad)
    except ops.SpecError:
        continue
    raise AssertionError("accepted " + bad)
print("ok: ops.parse_spec")
PY
echo "ok: loop decide"
