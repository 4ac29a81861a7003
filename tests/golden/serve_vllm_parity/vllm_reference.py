#!/usr/bin/env python3
"""An independent implementation of vLLM `bench serve`'s metric formulas (vllm/benchmarks/serve.py
calculate_metrics and benchmark(), lib/endpoint_request_func.py), computed from magpie's
per-request event log (requests.jsonl) instead of from magpie's own code. Pure Python (no numpy,
no vllm) so that it runs in CI.

Per request, as vLLM's request functions record it:
  chunk    = an SSE message with a non-empty `choices` array (requests.jsonl: chunks_ms)
  ttft     = first chunk - start;  itl = gaps between successive chunks;  latency = last chunk - start
  output tokens = usage.completion_tokens; when the server sent none, magpie's stand-in for vLLM's
                  re-tokenisation: the sum of per-read usage deltas when all are known, else the
                  number of content events
  prompt_len    = usage.prompt_tokens when reported, else the dataset's length
  client queue  = start - arrival
Usage: vllm_reference.py requests.jsonl [--goodput ttft:MS ...] [--percentiles 99,50] [--metrics ttft,tpot,itl]
→ the vLLM result keys as JSON on stdout.
"""
import argparse
import json
import math
import sys


def percentile(values, p):
    """numpy.percentile's default (linear interpolation between order statistics)."""
    v = sorted(values)
    if not v:
        return 0.0
    k = (len(v) - 1) * p / 100.0
    lo = math.floor(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def stats(name, values_s, percentiles, out):
    """vLLM's process_one_metric: mean/median/std (population) and pNN, in ms."""
    ms = [x * 1000.0 for x in values_s] or [0.0]
    mean = sum(ms) / len(ms)
    out[f"mean_{name}_ms"] = mean
    out[f"median_{name}_ms"] = percentile(ms, 50)
    out[f"std_{name}_ms"] = math.sqrt(sum((x - mean) ** 2 for x in ms) / len(ms))
    for p in percentiles:
        label = str(int(p)) if int(p) == p else str(p)
        out[f"p{label}_{name}_ms"] = percentile(ms, p)


def output_tokens(q):
    usage = q.get("completion_tokens_usage")
    if usage:
        return usage
    deltas = [d[1] for d in q["deliveries_ms_tokens"]]
    if deltas and all(d >= 0 for d in deltas):
        return sum(deltas)
    return q["content_events"]


def per_request(q):
    """The fields of vLLM's RequestFuncOutput, in seconds."""
    chunks = q["chunks_ms"]
    start = q["start_ms"]
    r = {"success": q["success"], "start": None if start is None else start / 1000.0,
         "prompt_len": q["prompt_tokens"] if q["prompt_tokens"] >= 0 else q["prompt_len"],
         "ttft": 0.0, "itl": [], "latency": 0.0, "output_tokens": 0, "queue": None}
    if start is not None and q.get("arrival_ms") is not None:
        r["queue"] = (start - q["arrival_ms"]) / 1000.0
    if chunks and start is not None:
        r["ttft"] = (chunks[0] - start) / 1000.0
        r["itl"] = [(b - a) / 1000.0 for a, b in zip(chunks, chunks[1:])]
    if q["success"]:
        r["latency"] = (chunks[-1] - start) / 1000.0
        r["output_tokens"] = output_tokens(q)
    return r


def peaks(ok, out):
    """max_output_tokens_per_s (1-s buckets of chunks from the first successful start) and the
    sweep-line peak of successful requests over [start, start + latency)."""
    out["max_output_tokens_per_s"] = 0.0
    out["max_concurrent_requests"] = 0
    if not ok:
        return
    min_start = min(r["start"] for r in ok)
    max_end = max(r["start"] + r["latency"] for r in ok)
    n = int(math.ceil(max_end - min_start)) + 1
    buckets = [0.0] * n
    events = []
    for r in ok:
        t = r["start"] + r["ttft"]
        times = [t]
        for gap in r["itl"]:
            t += gap
            times.append(t)
        for t in times:
            b = int(t - min_start)
            if 0 <= b < n:
                buckets[b] += 1
        events.append((r["start"], 1))
        events.append((r["start"] + r["latency"], -1))
    events.sort()
    cur = peak = 0
    for _, d in events:
        cur += d
        peak = max(peak, cur)
    out["max_output_tokens_per_s"] = max(buckets)
    out["max_concurrent_requests"] = peak


def compute(lines, goodput, percentiles, metrics):
    measured = [q for q in lines if not q["warmup"]]
    reqs = [per_request(q) for q in measured]
    ends = [q["end_ms"] for q in measured if q["start_ms"] is not None]
    dur = max(ends) / 1000.0 if ends else 0.0  # magpie's t0 is the benchmark start
    ok = [r for r in reqs if r["success"]]
    out_lens = [r["output_tokens"] if r["success"] else 0 for r in reqs]
    tpots, all_tpots = [], []
    for r in ok:
        tpot = 0.0
        if r["output_tokens"] > 1:
            tpot = (r["latency"] - r["ttft"]) / (r["output_tokens"] - 1)
            tpots.append(tpot)
        all_tpots.append(tpot)
    total_in = sum(r["prompt_len"] for r in ok)
    good = 0
    for r, tpot in zip(ok, all_tpots):
        vals = {"ttft": r["ttft"], "tpot": tpot, "e2el": r["latency"]}
        if all(vals[k] <= v / 1000.0 for k, v in goodput.items()):
            good += 1
    out = {"duration": dur, "completed": len(ok), "failed": len(reqs) - len(ok), "total_input_tokens": total_in,
           "total_output_tokens": sum(out_lens), "request_throughput": len(ok) / dur,
           "request_goodput": good / dur if goodput else None, "output_throughput": sum(out_lens) / dur,
           "total_token_throughput": (total_in + sum(out_lens)) / dur,
           "input_lens": [r["prompt_len"] for r in reqs], "output_lens": out_lens,
           "ttfts": [r["ttft"] for r in reqs], "itls": [r["itl"] for r in reqs],
           "latencies": [r["latency"] for r in reqs],
           "queue_times": [r["queue"] for r in reqs]}
    peaks(ok, out)
    samples = {"ttft": [r["ttft"] for r in ok], "tpot": tpots, "itl": [g for r in ok for g in r["itl"]],
               "e2el": [r["latency"] for r in ok], "client_queue_time": [r["queue"] for r in ok],
               "e2el_including_client_queue": [r["latency"] + r["queue"] for r in ok]}
    for name in metrics:  # vLLM's --percentile-metrics
        stats(name, samples[name], percentiles, out)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("requests_jsonl")
    ap.add_argument("--goodput", nargs="*", default=[])
    ap.add_argument("--percentiles", default="99")
    ap.add_argument("--metrics", default="ttft,tpot,itl,e2el,client_queue_time,e2el_including_client_queue")
    a = ap.parse_args()
    lines = [json.loads(x) for x in open(a.requests_jsonl) if x.strip()]
    goodput = {k: float(v) for k, v in (g.split(":") for g in a.goodput)}
    pcts = [float(p) for p in a.percentiles.split(",")]
    json.dump(compute(lines, goodput, pcts, a.metrics.split(",")), sys.stdout)


if __name__ == "__main__":
    main()
