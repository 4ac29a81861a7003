#!/usr/bin/env bash
# vLLM parity: magpie's vLLM-keyed values (serving_result.json, benchmark_report.json latency)
# equal an independent implementation of vLLM's formulas (vllm_reference.py, from requests.jsonl)
# within 0.1%, on simulator runs with role-only first chunks, SSE events coalesced into one
# write, HTTP errors, cut streams, request timeouts, client-side queueing and Poisson arrivals.
set -euo pipefail
source "${MAGPIE_SOURCE_DIR:?set MAGPIE_SOURCE_DIR}/tests/golden/serve_common/common.sh"
here="$MAGPIE_SOURCE_DIR/tests/golden/serve_vllm_parity"

# compare WORKSPACE GOODPUT PERCENTILES METRICS: every key the reference computes, 0.1% (arrays element-wise)
compare() {
  python3 "$here/vllm_reference.py" "$1/requests.jsonl" --goodput $2 --percentiles "$3" --metrics "$4" > "$TMP/ref.json"
  python3 - "$1" "$TMP/ref.json" <<'PY'
import json, sys
ws, ref_path = sys.argv[1], sys.argv[2]
got = json.load(open(ws + "/serving_result.json"))
ref = json.load(open(ref_path))
rep = json.load(open(ws + "/benchmark_report.json"))
bad = []
def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-3 * max(abs(a), abs(b)) + 1e-6
def check(key, a, b):
    if isinstance(b, list):
        if not isinstance(a, list) or len(a) != len(b):
            bad.append(f"{key}: length {len(a) if isinstance(a, list) else a} vs {len(b)}")
            return
        for i, (x, y) in enumerate(zip(a, b)):
            check(f"{key}[{i}]", x, y)
    elif not close(a, b):
        bad.append(f"{key}: magpie {a} vs reference {b}")
for k, v in ref.items():
    if k not in got:
        bad.append(f"{k}: missing in serving_result.json")
    else:
        check(k, got[k], v)
for m in ("ttft", "tpot", "itl", "e2el"):   # Magpie's report carries the same values
    for stat in ("mean", "median", "std", "p99"):
        if f"{stat}_{m}_ms" in ref:
            check(f"latency.{m}.{stat}_ms", rep["latency"][m][f"{stat}_ms"], ref[f"{stat}_{m}_ms"])
if bad:
    print("\n".join(bad[:40]), file=sys.stderr)
    sys.exit(1)
print(f"{len(ref)} vLLM keys agree (completed {got['completed']}, failed {got['failed']})")
PY
}

# --- chat: role-only first chunks, 3 events per write, HTTP 500s, cut streams, timeouts
start_sim --decode-step-ms 2 --prefill-tokens-per-s 200000 --max-batch 64 --role-chunk --events-per-write 3 \
  --error-every 9 --abort-every 7 --abort-after-tokens 4
python3 - "$TMP/prompts.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(40):   # 200 tokens x 2 ms steps always outlast the 0.3 s request timeout
        f.write(json.dumps({"prompt": "tell me about request %d " % i * 8, "output_tokens": [5, 12, 30, 200][i % 4]}) + "\n")
PY
goodput="ttft:20 tpot:5 e2el:150"
"$MAGPIE_BIN" benchmark --base-url "$SIM_URL" --endpoint /v1/chat/completions --dataset-name custom \
  --dataset-path "$TMP/prompts.jsonl" --num-prompts 40 --max-concurrency 6 --request-rate 150 --request-timeout 0.3 \
  --goodput $goodput --metric-percentiles 50,90,99 --num-warmups 1 \
  --percentile-metrics ttft,tpot,itl,e2el,client_queue_time,e2el_including_client_queue -o "$TMP/a" > "$TMP/a.out" 2>&1 \
  || true  # failed requests are data (a warning), not a failed run
ws=$(workspace_in "$TMP/a")
[ -s "$ws/serving_result.json" ] || fail "no serving_result.json: $(cat "$TMP/a.out")"
check_json "$ws/serving_result.json" '
errs = r["errors"]
assert any("timed out" in e for e in errs), "no request timed out"
assert any("HTTP 500" in e for e in errs), "no HTTP error"
assert any("stream aborted" in e for e in errs), "no cut stream"
assert r["role_only_chunks"] > 0 and r["coalesced_events"] > 0, (r["role_only_chunks"], r["coalesced_events"])
assert r["completed"] >= 10, r["completed"]
assert r["max_concurrency"] == 6 and r["request_rate"] == 150
assert r["mean_ttft_ms"] < r["mean_ttft_content_ms"], "vLLM TTFT counts the role-only chunk"
# vLLM E2EL ends at the last chunk, never after the response; equal when every last chunk and
# its [DONE] arrived in one read (3 events per write; under load reads coalesce writes).
assert r["mean_e2el_ms"] <= r["mean_e2el_response_ms"], "vLLM E2EL ends at the last chunk"
assert r["endpoint_type"] == "openai-chat" and r["label"] is None and r["rtfx"] == 0
'
compare "$ws" "$goodput" 50,90,99 ttft,tpot,itl,e2el,client_queue_time,e2el_including_client_queue || fail "chat run: magpie differs from the reference"

# --- completions: 4 events per write of 2 tokens each, no per-chunk usage, all at once
start_sim --decode-step-ms 1 --max-batch 64 --chunk-tokens 2 --events-per-write 4
"$MAGPIE_BIN" benchmark --base-url "$SIM_URL" --random-input-len 32 --random-output-len 24 --random-range-ratio 0.5 \
  --num-prompts 30 --max-concurrency 8 --no-continuous-usage --label parity -o "$TMP/b" > "$TMP/b.out" 2>&1 \
  || fail "completions run failed: $(cat "$TMP/b.out")"
ws=$(workspace_in "$TMP/b")
check_json "$ws/serving_result.json" '
assert r["completed"] == 30 and r["failed"] == 0
assert r["coalesced_events"] > 0 and r["label"] == "parity"
assert "mean_e2el_ms" not in r and "p99_ttft_ms" in r and "p50_ttft_ms" not in r, "vLLM defaults: ttft,tpot,itl at p99"
'
compare "$ws" "" 99 ttft,tpot,itl || fail "completions run: magpie differs from the reference"
echo "serve_vllm_parity: ok"
