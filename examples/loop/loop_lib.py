"""Decision logic of the optimization loop (stdlib only, no I/O beyond reading given files):
every stop reason of run_loop.py is decided here from the step outputs, so the CI tests can
drive each one from recorded or synthetic data (tests/golden/loop_decide).

Stop reasons (stable codes, docs/optimization-loop.md):
  source_mapping_ambiguous       a kernel ranked at or above the choice has several definitions
  source_mapping_low_confidence  the chosen kernel resolved below min_confidence
  source_mapping_disagrees       the mapper and the kernel registry disagree about a kernel
  no_mappable_kernel             no ranked kernel is defined in the searched repositories
  no_candidates                  the chosen kernel's op has no candidate implementations
  correctness_unproven           outputs were not compared against a reference (or the baseline failed it)
  no_correct_candidate           every candidate failed the correctness gate
  no_faster_candidate            correct candidates exist, none is faster beyond the CI
  inputs_changed                 the two benchmarks' inputs (config, dataset, model) differ
  e2e_within_noise               the end-to-end change is not beyond run-to-run noise
  e2e_regression                 the end-to-end change is beyond noise and worse
  (infrastructure: server_failed, benchmark_failed, profile_failed, switch_failed, step_failed)
"""
import csv
import hashlib
import io
import json
import math
import re

STOP_CATEGORY = {
    "source_mapping_ambiguous": "source mapping uncertain",
    "source_mapping_low_confidence": "source mapping uncertain",
    "source_mapping_disagrees": "source mapping uncertain",
    "no_mappable_kernel": "source mapping uncertain",
    "no_candidates": "nothing to try",
    "correctness_unproven": "correctness unproven",
    "no_correct_candidate": "correctness unproven",
    "no_faster_candidate": "no kernel-level gain",
    "inputs_changed": "benchmark inputs changed",
    "e2e_within_noise": "end-to-end gain within noise",
    "e2e_regression": "end-to-end regression",
}


class Stop(Exception):
    """A decision that ends the loop: code (above), message, details (JSON-able)."""

    def __init__(self, code, message, details=None):
        super().__init__(message)
        self.code, self.message, self.details = code, message, details or {}

    def to_json(self):
        return {"code": self.code, "category": STOP_CATEGORY.get(self.code, "infrastructure"),
                "message": self.message, "details": self.details}


# ---------------------------------------------------------------- gap analysis + source mapping
def read_gap_csv(text):
    """Rows of a gap_analysis.csv (Magpie's columns; '#' preamble lines skipped) as dicts."""
    lines = [l for l in text.splitlines() if not l.startswith("#")]
    return list(csv.DictReader(io.StringIO("\n".join(lines))))


def _num(v, default=0.0):
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


def parse_source_file(s):
    """'$LOOP_DIR/kernels_baseline.py:17' -> ('kernels_baseline.py', 17); ('', 0) if not of that form."""
    m = re.match(r"^(?:\$[A-Za-z0-9_]+/)?(.+):(\d+)$", s or "")
    return (m.group(1), int(m.group(2))) if m else ("", 0)


def _symbol_of(name, symbols):
    """The registry symbol a trace kernel name denotes ('' if none): exact, or a Triton name
    with a specialisation suffix (older Triton: _kernel_0d1d2d)."""
    if name in symbols:
        return name
    for s in symbols:
        if name.startswith(s) and re.fullmatch(r"(_\d+d)*(_[0-9a-z]+)?", name[len(s):]):
            return s
    return ""


def classify_rows(rows, confidences, kernel_symbols, min_confidence):
    """Annotates each ranked gap row with its disposition:
    chosen-able ('ours'), 'external' (defined outside the searched repositories or closed source),
    'ambiguous', 'low_confidence', 'disagrees'. `confidences`: kernel name -> (confidence, candidates)
    from `magpie trace sources --json` (may be empty: then CSV resolution only, confidence None)."""
    out = []
    for rank, r in enumerate(rows, 1):
        name = r.get("Name", "")
        res, err = r.get("source_resolution", ""), r.get("source_error", "")
        conf, cands = confidences.get(name, (None, []))
        sym = _symbol_of(name, kernel_symbols)
        rel, line = parse_source_file(r.get("source_file", ""))
        d = {"rank": rank, "name": name, "calls": int(_num(r.get("Calls"))), "total_us": _num(r.get("Self CUDA total (us)")),
             "avg_us": _num(r.get("Avg time (us)")), "pct_total": _num(r.get("% Total")), "kind": r.get("kind", ""),
             "category": r.get("category", ""), "source_resolution": res, "source_error": err,
             "source_file": r.get("source_file", ""), "file": rel, "line": line, "confidence": conf,
             "candidates": cands, "registry_symbol": sym, "input_shapes": r.get("Input Shapes", "")}
        if res == "resolved":
            if sym == "":
                d["disposition"] = "disagrees"
                d["why"] = "resolved to %s but not a kernel of the registry (kernel_symbols)" % d["source_file"]
            elif conf is not None and conf < min_confidence:
                d["disposition"] = "low_confidence"
                d["why"] = "confidence %.2f < %.2f" % (conf, min_confidence)
            else:
                d["disposition"] = "ours"
                d["why"] = "defined at %s" % d["source_file"]
        elif err.endswith("_ambiguous") or err == "source_ambiguous":
            d["disposition"] = "ambiguous"
            d["why"] = "several definitions: %s" % (", ".join(cands) or r.get("notes", ""))
        elif sym:
            d["disposition"] = "disagrees"
            d["why"] = "registry kernel %s not resolved by the mapper (%s)" % (sym, err or res)
        else:
            d["disposition"] = "external"
            d["why"] = "%s: %s" % (res or "unmapped", err or "no source column")
        out.append(d)
    return out


def choose_kernel(classified, kernel_symbols):
    """The highest-ranked kernel (by total time) that is ours, with every kernel above it external.
    Raises Stop for an ambiguous / low-confidence / disagreeing kernel at or above the choice, or
    when nothing maps. Returns (row, op)."""
    for d in classified:
        disp = d["disposition"]
        if disp == "ours":
            return d, kernel_symbols[d["registry_symbol"]]
        if disp == "external":
            continue
        code = {"ambiguous": "source_mapping_ambiguous", "low_confidence": "source_mapping_low_confidence"}.get(
            disp, "source_mapping_disagrees")
        raise Stop(code, "kernel #%d %s: %s" % (d["rank"], d["name"][:80], d["why"]), {"kernel": d})
    raise Stop("no_mappable_kernel", "none of the %d ranked kernels is defined in the searched repositories"
               % len(classified), {"ranked": len(classified)})


def sources_confidences(sources_json):
    """kernel name -> (confidence, candidates) from `magpie trace sources --json`."""
    out = {}
    for k in (sources_json or {}).get("kernels", []):
        out[k.get("name", "")] = (k.get("confidence"), k.get("candidates") or [])
    return out


# ---------------------------------------------------------------- compare
def choose_winner(compare_report, op_cfg):
    """From compare_report.json: the fastest candidate that passed the correctness gate with a
    'faster' verdict. Returns a dict (winner id, impl, speedup, CI, all candidates). Raises Stop."""
    res = compare_report.get("results") or {}
    kernels = res.get("kernel_results") or []
    verdicts = {v.get("kernel_id"): v for v in res.get("verdicts") or []}
    ids = [k.get("extra", {}).get("kernel_id", k.get("kernel_id", "")) for k in kernels]
    base_id = op_cfg["baseline_id"]
    summary = []
    for kid, k in zip(ids, kernels):
        v = verdicts.get(kid, {})
        t = k.get("timing") or {}
        summary.append({"id": kid, "outcome": k.get("outcome"), "correctness_method": k.get("correctness_method"),
                        "verdict": v.get("verdict"), "speedup": v.get("speedup_vs_baseline"),
                        "ci_low": v.get("ci_low"), "ci_high": v.get("ci_high"),
                        "median_ns": (t.get("stats_ns") or {}).get("median"), "samples": t.get("samples"),
                        "errors": (k.get("errors") or [])[:3]})
    info = {"baseline_id": base_id, "reference": res.get("reference"), "kernels": summary}
    by_id = {s["id"]: s for s in summary}
    base = by_id.get(base_id)
    if base is None:
        raise Stop("correctness_unproven", "baseline %s is not in the compare report" % base_id, info)
    if not res.get("reference"):
        raise Stop("correctness_unproven", "the compare had no reference implementation", info)
    unproven = [s["id"] for s in summary if s["outcome"] == "passed" and s["correctness_method"] != "outputs"]
    if unproven:
        raise Stop("correctness_unproven", "correctness not checked on outputs for %s" % ", ".join(unproven), info)
    if base["outcome"] != "passed":
        raise Stop("correctness_unproven", "the baseline %s itself failed against the reference (%s)"
                   % (base_id, base["outcome"]), info)
    cands = [by_id[c] for c in op_cfg["candidates"] if c in by_id]
    if not cands:
        raise Stop("no_candidates", "no candidate of %s was in the compare" % base_id, info)
    correct = [c for c in cands if c["outcome"] == "passed"]
    if not correct:
        raise Stop("no_correct_candidate", "every candidate failed the correctness gate: %s"
                   % ", ".join("%s (%s)" % (c["id"], c["outcome"]) for c in cands), info)
    faster = [c for c in correct if c["verdict"] == "faster" and (c["ci_low"] or 0) > 1.0]
    if not faster:
        raise Stop("no_faster_candidate", "no correct candidate is faster beyond its CI: %s"
                   % ", ".join("%s %s %.3f" % (c["id"], c["verdict"], c["speedup"] or 0) for c in correct), info)
    w = max(faster, key=lambda c: c["speedup"])
    return dict(info, winner=w["id"], impl=op_cfg["candidates"][w["id"]], speedup=w["speedup"],
                ci_low=w["ci_low"], ci_high=w["ci_high"], baseline_median_ns=base["median_ns"],
                winner_median_ns=w["median_ns"])


# ---------------------------------------------------------------- benchmarks
def benchmark_metrics(report):
    """The end-to-end metrics of one benchmark_report.json (None where absent)."""
    th = report.get("throughput") or {}
    lat = report.get("latency") or {}

    def stat(name, key="mean_ms"):
        return (lat.get(name) or {}).get(key)
    return {"output_throughput": th.get("output_throughput"), "request_throughput": th.get("request_throughput"),
            "total_token_throughput": th.get("total_token_throughput"),
            "completed": th.get("completed_requests"), "failed": th.get("failed_requests"),
            "duration_s": th.get("duration_seconds"), "tpot_mean_ms": stat("tpot"), "tpot_median_ms": stat("tpot", "median_ms"),
            "ttft_mean_ms": stat("ttft"), "itl_mean_ms": stat("itl"), "e2el_mean_ms": stat("e2el"),
            "success": report.get("success")}


# Keys of the effective config that define the workload — not where results go, how it is
# profiled, or which URL the (restarted, new-port) server had; the model is identified by the
# server's model config and weights fingerprint instead.
_WORKLOAD_KEYS = ("client", "envs", "model", "framework", "precision")


def _strip(obj, drop):
    if isinstance(obj, dict):
        return {k: _strip(v, drop) for k, v in sorted(obj.items()) if k not in drop}
    if isinstance(obj, list):
        return [_strip(v, drop) for v in obj]
    return obj


def benchmark_fingerprint(report, request_lens, server_info):
    """sha256 over what the benchmark fed the server: the workload part of the effective config,
    the per-request (input_len, output_len) sequence and the model (config + weights). Also
    returns the parts, so a mismatch can be explained."""
    eff = ((report.get("provenance") or {}).get("effective_config")) or {}
    workload = {k: eff.get(k) for k in _WORKLOAD_KEYS if k in eff}
    workload = _strip(workload, {"output_dir", "profiler", "torch_profiler", "run_kind"})
    model = {"model_config": server_info.get("model_config"), "weights_sha256": server_info.get("weights_sha256")}
    parts = {"workload": workload, "requests": request_lens, "model": model}
    parts_h = {k: hashlib.sha256(json.dumps(v, sort_keys=True).encode()).hexdigest()[:16] for k, v in parts.items()}
    total = hashlib.sha256(json.dumps(parts_h, sort_keys=True).encode()).hexdigest()
    return total, parts_h


def check_inputs_unchanged(before, after):
    """before/after: lists of (fingerprint, parts) of each run. Raises Stop(inputs_changed)."""
    ref = before[0]
    for side, runs in (("baseline", before), ("after", after)):
        for i, (fp, parts) in enumerate(runs):
            if fp != ref[0]:
                diff = sorted(k for k in parts if parts[k] != ref[1].get(k))
                raise Stop("inputs_changed", "%s run %d differs from baseline run 0 in: %s" % (side, i, ", ".join(diff)),
                           {"expected": ref[1], "got": parts})
    return ref[0]


# ---------------------------------------------------------------- statistics
def mean_std(xs):
    n = len(xs)
    m = sum(xs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    return m, sd


def _betacf(a, b, x):
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > 1e-300 else 1e-300
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > 1e-300 else 1e-300
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-12:
            break
    return h


def betainc(a, b, x):
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1 - x) / b


def t_two_sided_p(t, df):
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def welch(a, b):
    """Welch's t-test of mean(b) vs mean(a): (t, df, two-sided p). Identical constant samples: p = 1."""
    ma, sa = mean_std(a)
    mb, sb = mean_std(b)
    va, vb = sa * sa / len(a), sb * sb / len(b)
    if va + vb == 0:
        return (0.0, float(len(a) + len(b) - 2), 1.0 if ma == mb else 0.0)
    t = (mb - ma) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / ((va * va / (len(a) - 1) if len(a) > 1 else 0) + (vb * vb / (len(b) - 1) if len(b) > 1 else 0) or 1e-300)
    return t, df, t_two_sided_p(t, df)


HIGHER_IS_BETTER = {"output_throughput": True, "request_throughput": True, "total_token_throughput": True,
                    "tpot_mean_ms": False, "tpot_median_ms": False, "ttft_mean_ms": False, "itl_mean_ms": False,
                    "e2el_mean_ms": False}


def e2e_change(before, after, alpha=0.05):
    """Per metric: mean ± std and min..max of each side, change %, Welch p, beyond_noise, better."""
    out = {}
    for name, higher in HIGHER_IS_BETTER.items():
        a = [m[name] for m in before if m.get(name) is not None]
        b = [m[name] for m in after if m.get(name) is not None]
        if len(a) < 2 or len(b) < 2:
            out[name] = {"tested": False, "n_before": len(a), "n_after": len(b)}
            continue
        ma, sa = mean_std(a)
        mb, sb = mean_std(b)
        t, df, p = welch(a, b)
        change = (mb - ma) / ma * 100.0 if ma else 0.0
        out[name] = {"tested": True, "before_mean": ma, "before_std": sa, "before_min": min(a), "before_max": max(a),
                     "before_spread_pct": (max(a) - min(a)) / ma * 100.0 if ma else 0.0,
                     "after_mean": mb, "after_std": sb, "after_min": min(b), "after_max": max(b),
                     "change_pct": change, "welch_t": t, "welch_df": df, "p_value": p,
                     "beyond_noise": p < alpha, "better": (mb > ma) == higher if mb != ma else None,
                     "n_before": len(a), "n_after": len(b)}
    return out


def results_compare_verdict(rc_json, metric="output_throughput"):
    """beyond_noise / verdict of one metric ("throughput.<metric>", else any key ending in it) in
    `magpie results compare --json` (None if absent)."""
    ms = (rc_json or {}).get("metrics", [])
    key = lambda m: m.get("metric") or m.get("name") or ""
    hit = [m for m in ms if key(m) == "throughput." + metric] or [m for m in ms if key(m).endswith(metric)]
    if not hit:
        return None
    m = hit[0]
    return {"name": key(m), "beyond_noise": m.get("beyond_noise"), "verdict": m.get("verdict"),
            "change_pct": m.get("change_pct"), "basis": m.get("basis")}


def check_store_hashes(rc_json, before_urls, after_urls):
    """magpie results compare's config hashes of both sides (its own view of "same benchmark").
    Different hashes with the same server URL on both sides: Stop(inputs_changed). Different
    hashes when the URL differed (a port fallback): a warning string. Else None."""
    a = {r.get("config_hash") for r in (rc_json or {}).get("a_runs", [])}
    b = {r.get("config_hash") for r in (rc_json or {}).get("b_runs", [])}
    if not a or not b or a == b and len(a) == 1:
        return None
    if set(before_urls) == set(after_urls) and len(set(before_urls)) == 1:
        raise Stop("inputs_changed", "magpie results compare sees different benchmark configurations: %s vs %s"
                   % (sorted(a), sorted(b)), {"a": sorted(a), "b": sorted(b)})
    return "config hashes differ (%s vs %s) but so do the server URLs (%s vs %s)" % (
        sorted(a), sorted(b), sorted(set(before_urls)), sorted(set(after_urls)))


def e2e_decision(change, primary, magpie_verdict=None):
    """Raises Stop(e2e_within_noise | e2e_regression) or returns 'improved'. When magpie's own
    noise verdict (results compare) is known and disagrees with ours, the change counts as
    within noise (neither test alone is trusted over the other)."""
    c = change.get(primary) or {}
    if not c.get("tested"):
        raise Stop("e2e_within_noise", "%s could not be tested (%d / %d runs)"
                   % (primary, c.get("n_before", 0), c.get("n_after", 0)), {"metric": c})
    ours = c["beyond_noise"]
    theirs = (magpie_verdict or {}).get("beyond_noise")
    detail = {"metric": primary, "ours": c, "magpie_results_compare": magpie_verdict}
    if theirs is not None and theirs != ours:
        raise Stop("e2e_within_noise", "%s %+.2f%%: Welch p=%.3g says %s, magpie results compare says %s"
                   % (primary, c["change_pct"], c["p_value"], "beyond noise" if ours else "within noise",
                      "beyond noise" if theirs else "within noise"), detail)
    if not ours:
        raise Stop("e2e_within_noise", "%s %+.2f%% is within run-to-run noise (Welch p=%.3g, baseline spread %.2f%%)"
                   % (primary, c["change_pct"], c["p_value"], c["before_spread_pct"]), detail)
    if not c["better"]:
        raise Stop("e2e_regression", "%s %+.2f%% is a regression beyond noise (Welch p=%.3g)"
                   % (primary, c["change_pct"], c["p_value"]), detail)
    return "improved"
