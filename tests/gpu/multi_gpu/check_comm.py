"""Independent check of magpie's communication numbers on a multi-rank trace directory.

For every rank trace (*-rank-<N>.pt.trace.json[.gz]) it recomputes, from the raw events and
without magpie: the NCCL kernels and the sum of their durations, the union of communication
intervals, the part of it not covered by computation (exposed) and the rest (overlapped). Rules
as docs/trace-analysis.md states them: GPU events are cat kernel / gpu_memcpy / gpu_memset;
names containing nccl / rccl / cross_device_reduce are communication, gpu_memcpy is memcpy,
everything else computation; a kernel overrunning the next one on its (device, stream) is
clipped to the next start. Timestamps are read as exact decimals (µs with ns digits).

It compares them with, per rank: magpie trace report's report.json (analysis.communication,
exact ns) and magpie benchmark --trace-dir's gap_analysis_rank<N>.csv (NCCL rows of "Self CUDA
total (us)", 2 decimals), and with --expected (the generator's numbers by construction).

Usage: check_comm.py TRACE_DIR ANALYSIS_DIR [--expected FILE] [--json OUT]
  ANALYSIS_DIR holds gap/gap_analysis/gap_analysis_rank<N>.csv and report_rank<N>/report.json
  (what analyze.sh writes). Prints one table row per rank; exit 1 on any mismatch.
"""
import argparse
import csv
import decimal
import glob
import gzip
import json
import os
import re
import sys

COMM_WORDS = ("nccl", "rccl", "cross_device_reduce")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=decimal.Decimal)


def ns(x):
    return int((decimal.Decimal(x) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def gpu_events(doc):
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    out = []
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        if "ts" not in e or "dur" not in e:
            continue
        args = e.get("args") or {}
        out.append({"name": e.get("name", ""), "cat": e["cat"], "begin": ns(e["ts"]), "dur": ns(e["dur"]),
                    "device": args.get("device", e.get("pid")), "stream": args.get("stream", e.get("tid"))})
    return out


def clip_overruns(events):
    by_stream = {}
    for e in sorted(events, key=lambda e: e["begin"]):
        by_stream.setdefault((str(e["device"]), str(e["stream"])), []).append(e)
    clipped = 0
    for evs in by_stream.values():
        for a, b in zip(evs, evs[1:]):
            if a["begin"] + a["dur"] > b["begin"] >= a["begin"]:
                a["dur"] = b["begin"] - a["begin"]
                clipped += 1
    return clipped


def union(intervals):
    merged = []
    for b, e in sorted(intervals):
        if merged and b <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([b, e])
    return merged


def length(merged):
    return sum(e - b for b, e in merged)


def minus(a, b):
    """a − b for merged, sorted interval lists."""
    out, j = [], 0
    for lo, hi in a:
        cur = lo
        while j < len(b) and b[j][1] <= cur:
            j += 1
        k = j
        while k < len(b) and b[k][0] < hi:
            if b[k][0] > cur:
                out.append([cur, b[k][0]])
            cur = max(cur, b[k][1])
            k += 1
        if cur < hi:
            out.append([cur, hi])
    return out


def is_comm(e):
    low = e["name"].lower()
    return e["cat"] == "kernel" and any(w in low for w in COMM_WORDS)


def recompute(path):
    evs = gpu_events(load(path))
    clipped = clip_overruns(evs)
    comm = [e for e in evs if is_comm(e)]
    comp = [e for e in evs if not is_comm(e) and e["cat"] != "gpu_memcpy"]
    nccl = [e for e in comm if "nccl" in e["name"].lower()]
    COMM = union([(e["begin"], e["begin"] + e["dur"]) for e in comm])
    COMP = union([(e["begin"], e["begin"] + e["dur"]) for e in comp])
    exposed = length(minus(COMM, COMP))
    return {"gpu_events": len(evs), "clipped": clipped, "nccl_kernels": len(nccl),
            "nccl_sum_ns": sum(e["dur"] for e in nccl), "comm_union_ns": length(COMM),
            "exposed_ns": exposed, "overlapped_ns": length(COMM) - exposed}


def gap_csv_nccl_us(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    nccl = [r for r in rows if "nccl" in r["Name"].lower()]
    return sum(float(r["Self CUDA total (us)"]) for r in nccl), len(nccl), sum(int(r["Calls"]) for r in nccl)


def rank_of(path):
    m = re.search(r"rank[-_]?(\d+)", os.path.basename(path))
    return int(m.group(1)) if m else None


def check_rank(rank, trace, analysis_dir, expected, problems):
    mine = recompute(trace)
    rep = json.load(open(os.path.join(analysis_dir, f"report_rank{rank}", "report.json")))
    comm = rep["analysis"]["communication"]
    gap_us, gap_rows, gap_calls = gap_csv_nccl_us(os.path.join(analysis_dir, "gap", "gap_analysis", f"gap_analysis_rank{rank}.csv"))
    slack = 2 * mine["gpu_events"]  # ns: rounding of two boundaries per event, at most

    def expect(what, got, want, tol):
        if abs(got - want) > tol:
            problems.append(f"rank {rank}: {what}: {got} vs {want} (tolerance {tol})")

    if mine["nccl_kernels"] == 0:
        problems.append(f"rank {rank}: no NCCL kernel in the trace")
    expect("magpie total_ns vs the union of communication kernels", comm["total_ns"], mine["comm_union_ns"], slack)
    expect("magpie exposed_ns vs |COMM - COMP|", comm["exposed_ns"], mine["exposed_ns"], slack)
    expect("magpie overlapped_ns vs union - exposed", comm["overlapped_ns"], mine["overlapped_ns"], 2 * slack)
    if mine["comm_union_ns"] == mine["nccl_sum_ns"]:  # NCCL kernels never overlap each other: sum == total
        expect("magpie total_ns vs the sum of NCCL kernel durations", comm["total_ns"], mine["nccl_sum_ns"], slack)
    expect("gap_analysis_rank CSV NCCL calls vs NCCL kernels", gap_calls, mine["nccl_kernels"], 0)
    expect("gap_analysis_rank CSV NCCL us vs the sum (ns)", round(gap_us * 1000), mine["nccl_sum_ns"], 5 * gap_rows + slack)
    if expected is not None:
        want = expected["ranks"][str(rank)]
        for k in ("nccl_kernels", "nccl_sum_ns", "exposed_ns", "overlapped_ns"):
            expect(f"checker {k} vs the generator's construction", mine[k], want[k], 0)
    return {"rank": rank, "trace": os.path.basename(trace), **mine, "magpie": comm, "gap_csv_nccl_us": gap_us}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace_dir")
    ap.add_argument("analysis_dir")
    ap.add_argument("--expected")
    ap.add_argument("--json")
    args = ap.parse_args()
    traces = sorted(glob.glob(os.path.join(args.trace_dir, "*rank*.pt.trace.json*")), key=lambda p: rank_of(p) or 0)
    traces = [t for t in traces if rank_of(t) is not None and "clamped" not in t]
    expected = json.load(open(args.expected)) if args.expected else None
    problems, rows = [], []
    if len(traces) < 2:
        problems.append(f"{args.trace_dir}: {len(traces)} rank trace(s), need 2 or more")
    for t in traces:
        try:
            rows.append(check_rank(rank_of(t), t, args.analysis_dir, expected, problems))
        except (OSError, KeyError, ValueError) as e:
            problems.append(f"{t}: {type(e).__name__}: {e}")
    print(f"{'rank':>4} {'nccl':>5} {'nccl sum us':>12} {'magpie total us':>16} {'exposed us':>21} {'overlapped us':>21} {'gap csv us':>11}")
    for r in rows:
        m = r["magpie"]
        print(f"{r['rank']:>4} {r['nccl_kernels']:>5} {r['nccl_sum_ns'] / 1e3:>12.3f} {m['total_ns'] / 1e3:>16.3f} "
              f"{r['exposed_ns'] / 1e3:>10.3f}/{m['exposed_ns'] / 1e3:<10.3f} {r['overlapped_ns'] / 1e3:>10.3f}/{m['overlapped_ns'] / 1e3:<10.3f} "
              f"{r['gap_csv_nccl_us']:>11.2f}")
    print("(exposed / overlapped: this checker / magpie)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"ranks": rows, "problems": problems}, f, indent=1)
    for p in problems:
        print("MISMATCH: " + p, file=sys.stderr)
    print("comm check: " + ("ok" if not problems else f"{len(problems)} mismatch(es)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
