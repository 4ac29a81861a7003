#!/usr/bin/env python3
"""magpie next to its peers on the same traces: HTA (holistictraceanalysis) and TraceLens.

For each trace: wall time and peak RSS of each tool (median of --runs), the GPU timeline
(busy / idle / total) and the top kernels by total time, side by side. Run by
bench/trace/peers.sh, which makes the virtual environment with the pinned peers.

  peers.py --magpie BIN [--tracelens-src DIR] [--runs 3] TRACE...

TraceLens: its source tree (--tracelens-src, the `TraceLens` package directory's parent) run
from PYTHONPATH with default options (linked GPU events only) plus its kernel_summary sheet.
HTA: TraceAnalysis over a directory holding only the trace; temporal breakdown and kernel
breakdown. magpie: `trace report --no-html` (and --tracelens-compat for the TraceLens rule).
"""
import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

TIME = "/usr/bin/time"


def timed(cmd, env=None):
    """(wall s, peak RSS MB, stdout) of one run; raises on failure."""
    with tempfile.NamedTemporaryFile("r") as tf:
        p = subprocess.run([TIME, "-f", "%e %M", "-o", tf.name] + cmd, env=env, capture_output=True, text=True)
        if p.returncode not in (0, 3):
            raise RuntimeError(f"{cmd[0]} failed ({p.returncode}): {p.stderr[-2000:]}")
        wall, rss_kb = tf.read().split()[-2:]
    return float(wall), int(rss_kb) / 1024.0, p.stdout


HTA_SNIPPET = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
import logging; logging.disable(logging.CRITICAL)
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[1])
out = {}
try:
    row = a.get_temporal_breakdown(visualize=False).iloc[0]
    out.update(idle_us=float(row["idle_time(us)"]), busy_us=float(row["kernel_time(us)"]) - float(row["idle_time(us)"]))
except Exception as e:  # reported, not hidden: HTA 0.5.0 asserts on some real traces
    out["error"] = "get_temporal_breakdown: %s %s" % (type(e).__name__, e)
_, k = a.get_gpu_kernel_breakdown(visualize=False)
out["kernels_us"] = {str(r["name"]): float(r["sum (us)"]) for _, r in k.iterrows()}
print(json.dumps(out))
"""

TRACELENS_SNIPPET = r"""
import sys, warnings
warnings.filterwarnings("ignore")
from TraceLens.Reporting.generate_perf_report_pytorch import generate_perf_report_pytorch
generate_perf_report_pytorch(profile_json_path=sys.argv[1], output_csvs_dir=sys.argv[2], kernel_summary=True)
"""


def run_magpie(binary, trace, out, compat):
    cmd = [binary, "-q", "trace", "report", trace, "-o", out, "--no-html"] + (["--tracelens-compat"] if compat else [])
    wall, rss, _ = timed(cmd)
    tl = {r["type"]: float(r["time ms"]) * 1000 for r in csv.DictReader(open(os.path.join(out, "gpu_timeline.csv")))}
    kernels = {r["kernel_name"]: float(r["total_us"]) for r in csv.DictReader(open(os.path.join(out, "kernels.csv")))}
    return {"wall": wall, "rss": rss, "busy_us": tl["busy_time"], "idle_us": tl["idle_time"], "total_us": tl["total_time"],
            "kernels_us": kernels}


def run_hta(python, trace, work):
    d = os.path.join(work, "hta_in")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    os.symlink(os.path.abspath(trace), os.path.join(d, os.path.basename(trace)))
    wall, rss, out = timed([python, "-c", HTA_SNIPPET, d])
    j = json.loads(out.strip().splitlines()[-1])
    j.update(wall=wall, rss=rss)
    if "busy_us" in j:
        j["total_us"] = j["busy_us"] + j["idle_us"]
    return j


def run_tracelens(python, src, trace, work):
    out = os.path.join(work, "tracelens_csvs")
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=src)
    wall, rss, _ = timed([python, "-c", TRACELENS_SNIPPET, trace, out], env=env)
    tl = {r["type"]: float(r["time ms"]) * 1000 for r in csv.DictReader(open(os.path.join(out, "gpu_timeline.csv")))}
    kernels = {}
    for r in csv.DictReader(open(os.path.join(out, "kernel_summary.csv"))):
        kernels[r["Kernel name"]] = kernels.get(r["Kernel name"], 0.0) + float(r["Kernel duration (µs)_sum"])
    return {"wall": wall, "rss": rss, "busy_us": tl["busy_time"], "idle_us": tl["idle_time"], "total_us": tl["total_time"],
            "kernels_us": kernels}


def median_runs(fn, runs):
    res = [fn() for _ in range(runs)]
    out = res[-1]
    out["wall"] = statistics.median(r["wall"] for r in res)
    out["rss"] = statistics.median(r["rss"] for r in res)
    return out


def report(trace, rows, runs):
    size = os.path.getsize(trace) / 1e6
    print(f"\n## {os.path.basename(trace)} ({size:.1f} MB on disk), median of {runs} runs")
    base = rows["magpie"]
    print(f"{'tool':28} {'wall s':>8} {'x magpie':>9} {'RSS MB':>8} {'x magpie':>9} {'busy ms':>10} {'idle ms':>9} {'total ms':>10}")
    for tool, r in rows.items():
        if r is None:
            continue
        tl = (f"{r['busy_us'] / 1e3:10.3f} {r['idle_us'] / 1e3:9.3f} {r['total_us'] / 1e3:10.3f}" if "busy_us" in r
              else "  timeline failed: " + r.get("error", "?"))
        print(f"{tool:28} {r['wall']:8.3f} {r['wall'] / base['wall']:9.1f} {r['rss']:8.1f} {r['rss'] / base['rss']:9.1f} {tl}")
    top = sorted(base["kernels_us"].items(), key=lambda kv: -kv[1])[:5]
    tools = [t for t, r in rows.items() if r is not None and t != "magpie --tracelens-compat"]
    print("\ntop kernels, total us: " + " | ".join(tools))
    for name, _ in top:
        vals = [rows[t]["kernels_us"].get(name) for t in tools]
        cells = " | ".join("-" if v is None else f"{v:.1f}" for v in vals)
        print(f"  {name[:70]:70} {cells}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--magpie", required=True)
    ap.add_argument("--tracelens-src", default="")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("traces", nargs="+")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="magpie-peers-")
    print(f"machine: {os.uname().nodename}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} (shared: wall times "
          "move with the load, ratios within one run are what to read)")
    try:
        for t in a.traces:
            rows = {
                "magpie": median_runs(lambda: run_magpie(a.magpie, t, os.path.join(work, "m"), False), a.runs),
                "magpie --tracelens-compat": median_runs(lambda: run_magpie(a.magpie, t, os.path.join(work, "mc"), True),
                                                         a.runs),
                "HTA": median_runs(lambda: run_hta(sys.executable, t, work), a.runs),
                "TraceLens": (median_runs(lambda: run_tracelens(sys.executable, a.tracelens_src, t, work), a.runs)
                              if a.tracelens_src else None),
            }
            report(t, rows, a.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
