"""Prints one line per kernel of every magpie report under a results directory: outcome,
verdict, median, timer, integrity (first failed check) — used by tests/gpu/integrity_h200.sh."""
import glob
import json
import sys


def line(run, k, v):
    t = k.get("timing") or {}
    med = t.get("stats_ns", {}).get("median", 0) / 1e3 if t else 0
    integ = k.get("integrity") or {}
    fails = [c["name"] for c in integ.get("checks", []) if c["status"] == "fail"]
    warns = [c["name"] for c in integ.get("checks", []) if c["status"] == "warn"]
    xc = ""
    for c in ((k.get("performance_result") or {}).get("ncu") or {}).get("cross_check", []):
        xc += " ncu %.2f vs cupti %.2f us (%+.2f%%)" % (c["ncu_median_ns"] / 1e3, c["cupti_median_ns"] / 1e3,
                                                        c["diff_pct"])
    cc = t.get("cross_check") or {}
    procs = ",".join("%.2f" % (p["median_ns"] / 1e3) for p in t.get("processes", []))
    sp = v.get("speedup_vs_baseline")
    return "%-16s %-22s %-9s %-11s %-6s [%s] %9.2f us procs[%s] %s n=%s%s%s%s" % (
        run[:16], k["extra"]["kernel_id"][:22], k["outcome"], v.get("verdict", "-"),
        "%.3f" % sp if sp else "-", "%.3f-%.3f" % (v.get("ci_low", 0), v.get("ci_high", 0)) if sp else "",
        med, procs, t.get("source", "-"), t.get("samples", "-"),
        " ev/cupti=%.3f" % cc["harness_over_cupti"] if cc else "",
        " REJECTED(" + ",".join(fails) + ")" if fails else "", " warn(" + ",".join(warns) + ")" if warns else "") + xc


def main(root):
    for rep in sorted(glob.glob(root + "/**/*_report.json", recursive=True)):
        run = rep.split("/")[-3]
        r = json.load(open(rep))
        res = r["results"]
        kernels = res["kernel_results"] if isinstance(res, dict) else res
        verdicts = {v["kernel_id"]: v for v in res.get("verdicts", [])} if isinstance(res, dict) else {}
        for k in kernels:
            print(line(run, k, verdicts.get(k["extra"]["kernel_id"], {})))
            integ = k.get("integrity") or {}
            if integ.get("rejected"):
                print("      reason:", str(integ.get("reason"))[:220])
            elif k["outcome"] != "passed":
                print("      errors:", "; ".join(k["errors"])[:220])


if __name__ == "__main__":
    main(sys.argv[1])
