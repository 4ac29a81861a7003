#!/usr/bin/env python3
"""Generate a large PyTorch-profiler trace by replicating the events of a real one.

Each replica k shifts every timestamp by k * (span + 1 ms) and offsets the linking ids
(External id, correlation, flow id, Ev Idx) by k * (max id + 1), so the result is a valid,
linkable trace with the same event mix as the source (cpu_op / kernel / runtime / flows /
annotations). Metadata (ph == "M") events and the top-level keys are kept once.

Usage: gen_big_trace.py SRC.json[.gz] OUT.json MIN_MB [--gzip OUT.json.gz]
"""
import gzip
import json
import sys


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    src, out, min_mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rt") as f:
        data = json.load(f)
    events = data["traceEvents"]
    meta = [e for e in events if e.get("ph") == "M"]
    body = [e for e in events if e.get("ph") != "M"]
    t0 = min(e["ts"] for e in body if "ts" in e)
    t1 = max(e["ts"] + e.get("dur", 0) for e in body if "ts" in e)
    span = (t1 - t0) + 1000.0
    max_id = 0
    for e in body:
        a = e.get("args", {})
        for k in ("External id", "correlation", "Ev Idx"):
            if isinstance(a.get(k), int):
                max_id = max(max_id, a[k])
        if isinstance(e.get("id"), int):
            max_id = max(max_id, e["id"])
    step = max_id + 1
    head = {k: v for k, v in data.items() if k != "traceEvents"}
    target = int(min_mb * 1e6)
    written = 0
    with open(out, "w") as f:
        prefix = json.dumps(head)[:-1] + ', "traceEvents": [\n'
        f.write(prefix)
        written += len(prefix)
        first = True
        for e in meta:
            s = json.dumps(e)
            f.write(("" if first else ",\n") + s)
            first = False
            written += len(s) + 2
        k = 0
        while written < target:
            dt, di = k * span, k * step
            for e in body:
                e2 = dict(e)
                if "ts" in e2 and isinstance(e2["ts"], (int, float)):
                    e2["ts"] = round(e2["ts"] + dt, 3)
                if isinstance(e2.get("id"), int):
                    e2["id"] = e2["id"] + di
                a = e2.get("args")
                if a:
                    a = dict(a)
                    for key in ("External id", "correlation", "Ev Idx"):
                        if isinstance(a.get(key), int):
                            a[key] = a[key] + di
                    e2["args"] = a
                s = json.dumps(e2)
                f.write(",\n" + s)
                written += len(s) + 2
            k += 1
        f.write("\n]}\n")
    print(f"wrote {out}: {written / 1e6:.1f} MB, {k} replicas of {len(body)} events", file=sys.stderr)
    if len(sys.argv) >= 6 and sys.argv[4] == "--gzip":
        with open(out, "rb") as fi, gzip.open(sys.argv[5], "wb", compresslevel=6) as fo:
            while True:
                b = fi.read(1 << 20)
                if not b:
                    break
                fo.write(b)
        print(f"wrote {sys.argv[5]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
