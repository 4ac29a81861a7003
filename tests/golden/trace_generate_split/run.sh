#!/usr/bin/env bash
# Prefill/decode split without framework step annotations (issue 16 §3) on real traces recorded
# on an H200 and an H100 (record_trace.py; structure.json holds what was recorded and where):
# transformers' generate() and a prof.step() loop (no annotations in either: torch records
# ProfilerStep#N only with a schedule), and the same loop under a schedule (ProfilerStep#2..#8).
# Asserts the step count and the prefill vs decode token counts, that the
# decode stage files hold only decode GEMMs, and that the vLLM-annotated path still works.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${MAGPIE_BIN:?}" "${MAGPIE_SOURCE_DIR:?}"
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
export MAGPIE_DATA_DIR="$MAGPIE_SOURCE_DIR/data"
[ -s "$here/structure.json" ] || { echo "skip: no recorded H200 traces here (run record_trace.py on a GPU)"; exit 77; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cd "$work"

for t in hf_generate profiler_step scheduled_steps; do
  "$MAGPIE_BIN" -q trace stages "$here/$t.pt.trace.json.gz" -o "$t" --json > "$t.json"
  python3 - "$here/structure.json" "$t" <<'PY'
import csv, json, sys
meta = {r["file"].split(".")[0]: r for r in json.load(open(sys.argv[1]))["traces"]}
name = sys.argv[2]
want, b = meta[name], json.load(open(name + ".json"))
steps = list(csv.DictReader(open(name + "/trace_split/execution_details.csv")))
busy = [s for s in steps if int(s["num_gpu_events"]) > 0]
assert len(busy) == want["forwards"], (len(busy), want["forwards"], b["warnings"])
pre = [s for s in busy if s["phase"] == "prefill_only"]
dec = [s for s in busy if s["phase"] == "decode_only"]
assert len(pre) == want["prefill_forwards"] and len(dec) == want["decode_forwards"], [s["phase"] for s in busy]
assert all(int(s["batch_size"]) == want["prefill_tokens"] for s in pre), [s["batch_size"] for s in pre]
assert all(int(s["batch_size"]) == want["decode_tokens_per_step"] for s in dec), [s["batch_size"] for s in dec]
assert all(float(s["end_ts_us"]) > float(s["start_ts_us"]) for s in busy), "every step ends after it starts"
n = [int(s["num_gpu_events"]) for s in dec]
assert max(n) <= 1.5 * min(n), f"decode steps hold very different GPU work: {n}"
expect_source = "profiler_steps" if want["annotations"] == "ProfilerStep" else "forward_pattern"
assert b["split_source"] == expect_source and b["phase_method"] == "attention", (b["split_source"], b["phase_method"])
if expect_source == "profiler_steps":  # the steps are torch's ranges, by name
    assert [s["step_name"] for s in busy] == [f"ProfilerStep#{k}" for k in range(2, 2 + want["forwards"])], \
        [s["step_name"] for s in busy]
assert b["phase_picks"]["prefill"]["batch_size"] == want["prefill_tokens"], b["phase_picks"]["prefill"]
assert b["phase_picks"]["decode"]["batch_size"] == want["decode_tokens_per_step"], b["phase_picks"]["decode"]
# The decode roofline CSV holds decode GEMMs only (M = the decode tokens), the prefill one prefill GEMMs.
for label, m in (("decode_only", want["decode_tokens_per_step"]), ("prefill_only", want["prefill_tokens"])):
    path = b["stage_results"]["decode" if label == "decode_only" else "prefill"]["simple_summary_file"]
    rows = [r for r in csv.DictReader(open(path)) if r["op_name"] == "aten::mm"]
    assert rows, f"no aten::mm rows in {path}"
    ms = {int(json.loads(r["params_json"])["M"]) for r in rows}
    # decode: every GEMM has the decode tokens; prefill: the largest M is the prompt (lm_head may
    # only see the last position of each sequence)
    assert (ms == {m}) if label == "decode_only" else (max(ms) == m), (label, ms)
print(f"{name}: {len(pre)} prefill step of {want['prefill_tokens']} tokens, {len(dec)} decode steps of "
      f"{want['decode_tokens_per_step']} tokens")
PY
done

# The vLLM-annotated path keeps working on the annotated example trace.
"$MAGPIE_BIN" -q trace stages "$MAGPIE_SOURCE_DIR/examples/traces/llama_tiny-rank-0.pt.trace.json.gz" -o ann --json > ann.json
python3 -c "
import json; b = json.load(open('ann.json'))
assert b['split_source'] == 'annotations' and b['phase_method'] == 'annotations', b['split_source']
assert b['phase_picks']['prefilldecode']['batch_size'] == 42 and b['phase_picks']['decode']['batch_size'] == 2, b['phase_picks']
"
echo "trace_generate_split: ok"
