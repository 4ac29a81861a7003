#!/usr/bin/env bash
# magpie benchmark --base-url against the simulator: vLLM-compatible result keys, Magpie
# report blocks, per-request files, goodput, chat endpoint, counts vs the server's record.
set -euo pipefail
source "${MAGPIE_SOURCE_DIR:?set MAGPIE_SOURCE_DIR}/tests/golden/serve_common/common.sh"
start_sim --decode-step-ms 2 --prefill-tokens-per-s 100000 --model sim-served
out="$TMP/out1"
"$MAGPIE_BIN" benchmark --base-url "$SIM_URL" --random-input-len 64 --random-output-len 16 --num-prompts 20 \
  --max-concurrency 4 --goodput ttft:1000 tpot:100 --metric-percentiles 50,99,99.9 -o "$out" > "$TMP/stdout1" \
  || fail "client run failed: $(cat "$TMP/stdout1")"
ws=$(workspace_in "$out")
[ -n "$ws" ] || fail "no workspace"
case "$ws" in */benchmark_external_*) ;; *) fail "workspace name $ws";; esac
for f in benchmark_report.json summary.txt serving_result.json requests.jsonl config.yaml; do
  [ -s "$ws/$f" ] || fail "missing $f"
done
grep -q "Status: SUCCESS" "$TMP/stdout1" || fail "summary not printed"
check_json "$ws/serving_result.json" '
assert r["completed"] == 20 and r["failed"] == 0, r["completed"]
assert r["model_id"] == "sim-served"
for k in ["request_throughput","output_throughput","total_token_throughput","mean_ttft_ms","median_ttft_ms","std_ttft_ms",
          "p99_ttft_ms","p99.9_ttft_ms","p50_tpot_ms","mean_itl_ms","request_goodput","max_concurrent_requests",
          "endpoint_type","generated_texts","start_times","queue_times","rtfx"]:
    assert k in r, k
assert "mean_e2el_ms" not in r, "vLLM default --percentile-metrics ttft,tpot,itl"
assert r["max_concurrency"] == 4 and r["num_prompts"] == 20
assert r["total_output_tokens"] == 320, r["total_output_tokens"]
assert all(x == 64 for x in r["input_lens"]), "fixed length with vLLM semantics (ratio 0)"
assert len(r["ttfts"]) == 20 and len(r["itls"]) == 20 and all(len(x) == 15 for x in r["itls"])
assert r["max_concurrent_requests"] <= 4 and r["max_concurrency"] == 4
assert r["request_goodput"] is not None and r["request_goodput"] > 0
assert "ttft" in r["metric_definitions"]
'
check_json "$ws/benchmark_report.json" '
assert r["success"] is True and r["errors"] == []
t = r["throughput"]; assert t["completed_requests"] == 20 and t["total_output_tokens"] == 320
for m in ["ttft","tpot","itl","e2el"]:
    for k in ["mean_ms","median_ms","p99_ms","std_ms","p50_ms"]:
        assert k in r["latency"][m], (m, k)
assert r["serving"]["requested"]["max_concurrency"] == 4
assert r["provenance"]["magpie_version"] and r["provenance"]["run_mode"] == "external"
assert r["run_kind"] == "measurement" and r["reward_eligible"] is True
'
# the server saw exactly these requests and token counts
python3 - "$TMP/truth.jsonl" "$ws/requests.jsonl" <<'PY'
import json, sys
truth = {j["id"]: j for j in map(json.loads, open(sys.argv[1]))}
reqs = [json.loads(l) for l in open(sys.argv[2])]
assert len(reqs) == 20, len(reqs)          # vLLM's default: no warm-up
for q in reqs:
    t = truth[q["id"]]
    assert q["output_tokens"] == t["generated"] and q["prompt_tokens"] == t["prompt_tokens"], (q, t)
PY
# chat endpoint, Poisson arrivals
out="$TMP/out2"
"$MAGPIE_BIN" benchmark --base-url "$SIM_URL" --endpoint /v1/chat/completions --random-input-len 32 --random-output-len 4 \
  --num-prompts 10 --request-rate 100 --seed 3 --num-warmups 0 -o "$out" > /dev/null || fail "chat run failed"
check_json "$(workspace_in "$out")/serving_result.json" '
assert r["backend"] == "openai-chat" and r["completed"] == 10 and r["request_rate"] == 100
assert r["scheduled_times"][0] > 0 and abs(r["scheduled_times"][-1] - 10 / 100) < 1e-9, r["scheduled_times"]  # vLLM: last at N / rate
'
# a server that is not there: the pre-flight says so on stderr, exit 1, nothing written
out="$TMP/out3"
rc=0
"$MAGPIE_BIN" benchmark --base-url http://127.0.0.1:1 --served-model-name x --num-prompts 2 -o "$out" > "$TMP/stdout3" 2> "$TMP/stderr3" || rc=$?
[ "$rc" -eq 1 ] || fail "closed port: exit $rc"
grep -q "http://127.0.0.1:1: Connection refused" "$TMP/stderr3" || fail "closed port: $(cat "$TMP/stderr3")"
[ ! -s "$TMP/stdout3" ] && [ ! -e "$out" ] || fail "closed port: output written"

echo "serve_base_url: ok"
