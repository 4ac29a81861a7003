"""The loop's report: loop_report.json (everything), loop_report.md (for people) and the short
table run_loop.py prints (stdlib only). Field meanings: docs/optimization-loop.md."""
import csv
import json
import os


def _f(x, fmt="%.2f", dash="-"):
    return fmt % x if isinstance(x, (int, float)) else dash


def _stage_rows(path, n=5):
    try:
        with open(path) as f:
            rows = list(csv.DictReader(f))
    except OSError:
        return []
    key = "kernel_time_ms_sum" if rows and "kernel_time_ms_sum" in rows[0] else None
    if key:
        rows.sort(key=lambda r: -float(r.get(key) or 0))
    keep = ("name", "kernel_name", "op_name", "category", "kernel_time_ms_sum", "time_pct", "roofline_bound",
            "pct_roofline_mean", "TFLOPS/s_mean", "TB/s_mean")
    return [{k: v for k, v in r.items() if k in keep or "roofline" in k} for r in rows[:n]]


def analysis_summary(res):
    """Compact view of the trace analysis: GPU timeline, top kernels / ops with roofline, stage picks."""
    out = {"trace": res.get("trace"), "gap_csv": res.get("gap_csv")}
    rep = res.get("report") or {}
    a = rep.get("analysis") or {}
    out["gpu_spec"] = rep.get("gpu_spec_choice")
    out["gpu_timeline"] = a.get("gpu_timeline")
    out["top_kernels"] = [{"name": k.get("name", "")[:120], "calls": k.get("calls"), "total_us": k.get("total_us"),
                           "category": k.get("category"), "bound": (k.get("roofline") or {}).get("bound"),
                           "pct_roofline": k.get("pct_roofline")} for k in (a.get("kernels") or [])[:10]]
    out["top_ops"] = [{"name": o.get("name", "")[:120], "category": o.get("category"),
                       "kernel_time_us_sum": o.get("kernel_time_us_sum", o.get("kernel_us")),
                       "bound": (o.get("roofline") or {}).get("bound"), "pct_roofline_mean": o.get("pct_roofline_mean")}
                      for o in (a.get("ops") or [])[:10]]
    if "error" in rep:
        out["report_error"] = rep["error"]
    st = res.get("stages") or {}
    stages = {}
    for name, r in (st.get("stage_results") or {}).items():
        pick = r.get("phase_pick") or {}
        stages[name] = {"step": pick.get("step_name"), "why": pick.get("selection_reason"), "error": r.get("error"),
                        "roofline_csv": r.get("simple_summary_file"),
                        "top": _stage_rows(r.get("simple_summary_file") or "")}
    out["stages"] = stages
    out["stages_errors"] = st.get("errors") or ([st["error"]] if "error" in st else [])
    src = res.get("sources") or {}
    out["sources_summary"] = src.get("summary") if "error" not in src else {"error": src["error"]}
    return out


def _side(e, name):
    m = (e or {}).get("metrics", {}).get(name) or {}
    if not m.get("tested"):
        return "-", "-", "-"
    return ("%.2f ± %.2f (%.2f–%.2f)" % (m["before_mean"], m["before_std"], m["before_min"], m["before_max"]),
            "%.2f ± %.2f (%.2f–%.2f)" % (m["after_mean"], m["after_std"], m["after_min"], m["after_max"]),
            "%+.2f%%, p=%.3g, %s" % (m["change_pct"], m["p_value"], "beyond noise" if m["beyond_noise"] else "within noise"))


def _baseline_only(rep, name):
    xs = [r["metrics"].get(name) for r in rep.get("baseline_runs") or [] if r["metrics"].get(name) is not None]
    if len(xs) < 1:
        return "-"
    m = sum(xs) / len(xs)
    sd = (sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5 if len(xs) > 1 else 0.0
    return "%.2f ± %.2f (%.2f–%.2f, n=%d)" % (m, sd, min(xs), max(xs), len(xs))


def table(rep):
    ch, k, e = rep.get("chosen") or {}, rep.get("kernel") or {}, rep.get("e2e")
    tp_b, tp_a, tp_c = _side(e, "output_throughput")
    tpot_b, tpot_a, tpot_c = _side(e, "tpot_mean_ms")
    if tp_b == "-":
        tp_b, tpot_b = _baseline_only(rep, "output_throughput"), _baseline_only(rep, "tpot_mean_ms")
    stop = rep.get("stop") or {}
    lines = [
        ("outcome", rep.get("outcome") or "-"),
        ("backend / prompts per run", "%s / %s (concurrency %s)" % (rep.get("backend"), rep.get("num_prompts", "-"),
                                                                   (rep.get("benchmark") or {}).get("concurrency"))),
        ("warm-up passes (discarded)", "; ".join("%s %s req in %s s" % (t, w.get("num_prompts"), _f(w.get("duration_s")))
                                               for t, w in (rep.get("warmups") or {}).items()) or "-"),
        ("baseline output tok/s", tp_b), ("baseline TPOT ms", tpot_b),
        ("chosen kernel", "%s (#%s, %s%% of window, op %s)" % (k_name(ch), ch.get("rank", "-"), _f(ch.get("pct_total")),
                                                             ch.get("op", "-")) if ch else "-"),
        ("source", "%s:%s (confidence %s)" % (ch.get("file"), ch.get("line"), _f(ch.get("confidence"))) if ch else "-"),
        ("kernel speedup", "%s: %.3fx (95%% CI %.3f–%.3f) vs %s" % (k["winner"], k["speedup"], k["ci_low"], k["ci_high"],
                                                                  k["baseline_id"]) if k.get("winner") else "-"),
        ("new output tok/s", tp_a), ("new TPOT ms", tpot_a),
        ("e2e change (throughput)", tp_c), ("e2e change (TPOT)", tpot_c),
        ("stop reason", "%s: %s" % (stop.get("code"), stop.get("message")) if stop else ("-" if rep.get("outcome") != "failed"
                                                                                       else "step failed: %s" % rep.get("error", "")[:300])),
    ]
    w = max(len(a) for a, _ in lines)
    return "\n".join("%-*s  %s" % (w, a, b) for a, b in lines)


def k_name(ch):
    n = ch.get("kernel", "-")
    return n if len(n) <= 60 else n[:57] + "..."


def markdown(rep):
    md = ["# Optimization loop report", "", "```", table(rep), "```", ""]
    ch = rep.get("chosen")
    if rep.get("ranking"):
        md += ["## Kernel ranking (steady-state window, by total time)", "",
               "| # | kernel | calls | total µs | % | disposition | why |", "|---|---|---|---|---|---|---|"]
        for r in rep["ranking"][:15]:
            md.append("| %d | `%s` | %d | %.1f | %.2f | %s | %s |" % (r["rank"], r["name"][:70].replace("|", "/"), r["calls"],
                                                                  r["total_us"], r["pct_total"], r["disposition"],
                                                                  r["why"][:90].replace("|", "/")))
        md.append("")
    if ch:
        md += ["Chosen: `%s` → `%s:%s` (op `%s`)." % (ch["kernel"], ch["file"], ch["line"], ch["op"]), ""]
    k = rep.get("kernel")
    if k:
        md += ["## Candidates (magpie compare, correctness gate vs %s)" % k.get("reference"), "",
               "| id | outcome | verdict | speedup | 95% CI | median µs |", "|---|---|---|---|---|---|"]
        for c in k.get("kernels", []):
            md.append("| %s | %s | %s | %s | %s–%s | %s |" % (c["id"], c["outcome"], c["verdict"], _f(c["speedup"], "%.3f"),
                                                          _f(c["ci_low"], "%.3f"), _f(c["ci_high"], "%.3f"),
                                                          _f((c["median_ns"] or 0) / 1e3 if c["median_ns"] else None)))
        md.append("")
    md += ["## Steps", "", "| step | status | seconds |", "|---|---|---|"]
    for name, s in rep.get("steps", {}).items():
        md.append("| %s | %s | %s |" % (name, s.get("status"), s.get("seconds")))
    md += ["", "Full data: loop_report.json; commands and logs: logs/."]
    return "\n".join(md) + "\n"


def _atomic(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def write(rep, out_dir):
    j, m = os.path.join(out_dir, "loop_report.json"), os.path.join(out_dir, "loop_report.md")
    _atomic(j, json.dumps(rep, indent=2, default=str) + "\n")
    _atomic(m, markdown(rep))
    return j, m
