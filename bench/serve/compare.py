#!/usr/bin/env python3
"""TTFT measurement error against the simulator's ground truth: for each request,
client TTFT - (server send time of its first token - client request start). Inputs: the
simulator's --record file and either magpie's requests.jsonl or aiohttp_client.py output."""
import json
import sys


def pct(v, p):
    v = sorted(v)
    if not v:
        return float("nan")
    k = (len(v) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def main(truth_path, client_path, kind):
    truth = {}
    for line in open(truth_path):
        j = json.loads(line)
        if j["events"]:
            truth[j["id"]] = j["events"][0][0]
    errs = []
    if kind == "magpie":
        for line in open(client_path):
            q = json.loads(line)
            if q["warmup"] or not q["success"] or q["id"] not in truth:
                continue
            # deliveries are ms relative to t0; monotonic_start_ns anchors them
            first_ns = q["monotonic_start_ns"] + (q["deliveries_ms_tokens"][0][0] - q["start_ms"]) * 1e6
            errs.append((first_ns - truth[q["id"]]) / 1e6)
    else:
        for q in json.load(open(client_path))["requests"]:
            if q["ok"] and q["first_ns"] and q["id"] in truth:
                errs.append((q["first_ns"] - truth[q["id"]]) / 1e6)
    print(json.dumps({"n": len(errs), "p50_ms": pct(errs, 50), "p99_ms": pct(errs, 99), "max_ms": max(errs) if errs else None}))


if __name__ == "__main__":
    main(*sys.argv[1:4])
