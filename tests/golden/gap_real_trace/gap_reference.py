#!/usr/bin/env python3
"""Independent reference for Magpie's gap analysis, written from the algorithm description
(research magpie.md §8) with only the standard library: json, gzip, csv.

Usage: gap_reference.py OUT_DIR TOP_K START_PCT END_PCT MIN_DUR TRACE [TRACE...]
Traces are given in rank order. Writes OUT_DIR/gap_analysis.csv and, with more than one
trace, OUT_DIR/gap_analysis_rank<i>.csv, exactly as Magpie's GapAnalysisResult writes them.
Categories are Magpie's defaults (allow kernel, gpu; ignore gpu_user_annotation,
user_annotation). The window span uses events with dur > 0 (Magpie's newer rule).
"""
import csv
import gzip
import json
import os
import sys


def load(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        data = json.load(f)
    return data.get("traceEvents", []) if isinstance(data, dict) else data


def shape_str(dims):
    parts = ["[" + ",".join(str(d) for d in dim) + "]" for dim in dims if isinstance(dim, list) and dim]
    return "x".join(parts)


def analyze(events, start, end, min_dur):
    if not (start <= 0 and end >= 100):
        timed = [e for e in events if "ts" in e and e.get("dur") and e["dur"] > 0]
        if timed:
            t0 = min(e["ts"] for e in timed)
            t1 = max(e["ts"] + e["dur"] for e in timed)
            span = t1 - t0
            lo, hi = t0 + span * start / 100.0, t0 + span * end / 100.0
            events = [e for e in events if "ts" in e and e["ts"] + e.get("dur", 0) >= lo and e["ts"] <= hi]
    shapes = {}
    for e in events:
        if "cpu_op" in (e.get("cat") or "").lower():
            a = e.get("args", {})
            if a.get("External id") is not None and a.get("Input Dims"):
                s = shape_str(a["Input Dims"])
                if s:
                    shapes[a["External id"]] = s
    stats = {}
    for e in events:
        cat = (e.get("cat") or "").lower()
        if any(x in cat for x in ("gpu_user_annotation", "user_annotation")):
            continue
        if not any(x in cat for x in ("kernel", "gpu")):
            continue
        dur = e.get("dur", 0.0)
        if min_dur > 0 and not dur >= min_dur:
            continue
        st = stats.setdefault(e.get("name", "<?>"), {"total": 0.0, "calls": 0, "shapes": []})
        st["total"] += dur
        st["calls"] += 1
        ext = e.get("args", {}).get("External id")
        if ext is not None and ext in shapes:
            st["shapes"].append(shapes[ext])
    ordered = sorted(stats.items(), key=lambda kv: -kv[1]["total"])
    return ordered, sum(v["total"] for _, v in ordered)


def rows(items, total, top_k):
    out = []
    for name, v in items[:top_k]:
        uniq = list(dict.fromkeys(s for s in v["shapes"] if s))
        pct = v["total"] / total * 100.0 if total > 0 else 0.0
        out.append([name, v["calls"], f"{v['total']:.2f}", f"{v['total'] / v['calls']:.2f}", f"{pct:.2f}",
                    "; ".join(uniq[:10])])
    return out


def write(path, body):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Name", "Calls", "Self CUDA total (us)", "Avg time (us)", "% Total", "Input Shapes"])
        for r in body:
            w.writerow(r)


def main():
    out, top_k, start, end, min_dur = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
    traces = sys.argv[6:]
    os.makedirs(out, exist_ok=True)
    per_rank = [analyze(load(t), start, end, min_dur) for t in traces]
    merged = {}
    for items, _ in per_rank:
        for name, v in items:
            m = merged.setdefault(name, {"total": 0.0, "calls": 0, "shapes": []})
            m["total"] += v["total"]
            m["calls"] += v["calls"]
            m["shapes"].extend(v["shapes"])
    merged_items = sorted(merged.items(), key=lambda kv: -kv[1]["total"])
    grand = sum(t for _, t in per_rank)
    write(os.path.join(out, "gap_analysis.csv"), rows(merged_items, grand, top_k))
    if len(traces) > 1:
        for i, (items, total) in enumerate(per_rank):
            write(os.path.join(out, f"gap_analysis_rank{i}.csv"), rows(items, total, top_k))
    print(f"total_duration_us={grand:.6f}")


if __name__ == "__main__":
    main()
