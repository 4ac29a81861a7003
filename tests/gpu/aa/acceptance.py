#!/usr/bin/env python3
"""Issue 36's GPU acceptance table from one tests/gpu/aa_h200.sh run: pass/fail per item.

Usage: acceptance.py OUT_DIR   (exit 0: every item passed; 1: some failed or had no data)
Reads OUT_DIR/res/<type>-<run>/compare_*/compare_report.json (A/A and the 3%-slower variant),
OUT_DIR/ncu/<type>/compare_*/compare_report.json (CUPTI vs ncu), OUT_DIR/cost_<tag>/compare_*/
compare_report.json and OUT_DIR/cost.log (cost before/after), OUT_DIR/wall.log (the run's wall time).
"""
import glob
import json
import os
import re
import sys

AA_MIN_PAIRS, AA_MIN_TYPES, AA_SAME = 24, 4, 0.95
SHORT_US, LONG_US = (0.5, 6.0), (30.0, 120.0)  # "~2 us" and "~60 us" kernels (median per launch)
NCU_MAX_PCT, NCU_MIN_US = 3.0, 10.0
COST_GOAL_S = 15.0
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int32": 4, "int64": 8, "int8": 1, "uint8": 1}


def reports(pattern):
    for rep in sorted(glob.glob(pattern)):
        try:
            yield rep, json.load(open(rep))
        except (OSError, ValueError) as e:
            print("note: unreadable report %s: %s" % (rep, e))


def find(o, key):
    if isinstance(o, dict):
        if key in o:
            yield o[key]
        for x in o.values():
            yield from find(x, key)
    elif isinstance(o, list):
        for x in o:
            yield from find(x, key)


def aa_items(out):
    pairs = same = 0
    types, medians, slow, rejected = {}, {}, [], []
    for rep, r in reports(os.path.join(out, "res", "*", "compare_*", "compare_report.json")):
        prob = rep.split(os.sep)[-3].rsplit("-", 1)[0]
        res = r["results"]
        ks = {k["extra"]["kernel_id"]: k for k in res["kernel_results"]}
        base = (ks.get("baseline") or {}).get("timing") or {}
        if base.get("stats_ns"):
            medians.setdefault(prob, []).append(base["stats_ns"].get("median", 0) / 1e3)
        for v in res["verdicts"]:
            kid = v["kernel_id"]
            if kid.startswith("copy"):
                pairs += 1
                types.setdefault(prob, [0, 0])[0] += 1
                if v["verdict"] == "same":
                    same += 1
                    types[prob][1] += 1
                if v.get("same_band") is None:
                    rejected.append("%s %s: %s" % (prob, kid, v.get("reason")))
            elif kid == "slow3":
                slow.append(v["verdict"])
    med = {p: sorted(m)[len(m) // 2] for p, m in medians.items() if m}
    short = [p for p, m in med.items() if SHORT_US[0] <= m <= SHORT_US[1]]
    long_ = [p for p, m in med.items() if LONG_US[0] <= m <= LONG_US[1]]
    rate = same / pairs if pairs else 0
    per_type = ", ".join("%s %d/%d (%.1f us)" % (p, t[1], t[0], med.get(p, 0)) for p, t in sorted(types.items()))
    yield ("A/A same >= 95% over >= 24 pairs, >= 4 types incl. ~2 us and ~60 us",
           pairs >= AA_MIN_PAIRS and len(types) >= AA_MIN_TYPES and bool(short) and bool(long_) and rate >= AA_SAME,
           "%d/%d same (%.0f%%) over %d types [%s]; ~2 us: %s; ~60 us: %s" % (
               same, pairs, 100 * rate, len(types), per_type, ",".join(short) or "none", ",".join(long_) or "none"))
    yield ("no honest copy rejected (every A/A copy ranked)", pairs > 0 and not rejected,
           "%d of %d copies not ranked%s" % (len(rejected), pairs, (": " + "; ".join(rejected[:3])) if rejected else ""))
    yield ("the 3%-slower variant comes out `slower`", bool(slow) and all(x == "slower" for x in slow),
           "verdicts: %s" % (", ".join(slow) or "no compare with slow3"))


def ncu_item(out):
    rows, bad = [], []
    for rep, r in reports(os.path.join(out, "ncu", "*", "compare_*", "compare_report.json")):
        prob = rep.split(os.sep)[-3]
        for k in r["results"]["kernel_results"]:
            for cc in find(k, "cross_check"):
                if not isinstance(cc, list):
                    continue
                for c in cc:
                    if c.get("cupti_median_ns", 0) < NCU_MIN_US * 1e3:
                        continue
                    d = c.get("diff_pct", 0)
                    rows.append(d)
                    if abs(d) > NCU_MAX_PCT:
                        bad.append("%s %s %s %+.2f%% (ncu %.2f us)" % (prob, k["extra"]["kernel_id"], str(c.get("kernel"))[:30], d,
                                                                       c.get("ncu_median_ns", 0) / 1e3))
    worst = max((abs(d) for d in rows), default=0)
    yield ("CUPTI within 3% of ncu for kernels >= 10 us", bool(rows) and not bad,
           "%d kernel(s) cross-checked, worst |diff| %.2f%%%s" % (len(rows), worst, ("; over 3%: " + "; ".join(bad[:4])) if bad else ""))


def phases_of(res):
    ph = res.get("phases")
    if ph:
        return ph
    # a build without results.phases (BASE_BIN): compile from each kernel's stage, timing from its wall
    ks = res.get("kernel_results", [])
    comp = sum(((k.get("compiling_result") or {}).get("duration_s") or 0) for k in ks)
    tim = max((((k.get("timing") or {}).get("wall_seconds")) or 0 for k in ks), default=0)
    return {"compile_s": comp, "timing_s": tim}


def tensor_bytes(res):
    """Bytes of one implementation's correctness tensors: every trial's outputs, and as many
    input bytes (the LayerNorm's input has its output's shape)."""
    for k in res.get("kernel_results", []):
        cmp = (k.get("correctness") or {}).get("comparison") or {}
        total = 0
        for t in cmp.get("trials", []):
            for o in t.get("outputs", []):
                total += o.get("numel", 0) * DTYPE_BYTES.get(o.get("dtype"), 4)
        if total:
            return 2 * total
    return 0


def cost_items(out):
    rows = {}
    log = os.path.join(out, "cost.log")
    if os.path.exists(log):
        for line in open(log):
            m = re.match(r"=== cost (\w+) rc=(\d+) wall_ms=(\d+) disk_bytes=(\d+)", line)
            if m:
                rows[m.group(1)] = {"rc": int(m.group(2)), "wall_s": int(m.group(3)) / 1e3, "disk": int(m.group(4))}
    for tag, row in rows.items():
        for rep, r in reports(os.path.join(out, "cost_" + tag, "compare_*", "compare_report.json")):
            row["phases"] = phases_of(r["results"])
            row["tensors"] = tensor_bytes(r["results"])
    for tag in ("before", "after"):
        if tag in rows:
            row = rows[tag]
            ph = " ".join("%s %.1f" % (k[:-2], v) for k, v in (row.get("phases") or {}).items())
            print("cost %-6s rc=%d wall %.1f s, disk %.1f MB (tensors once %.1f MB); phases (s): %s" % (
                tag, row["rc"], row["wall_s"], row["disk"] / 1e6, row.get("tensors", 0) / 1e6, ph or "-"))
    a = rows.get("after")
    yield ("3-implementation LayerNorm compare <= 15 s wall", bool(a) and a["rc"] == 0 and a["wall_s"] <= COST_GOAL_S,
           "after %.1f s%s" % (a["wall_s"], "" if "before" not in rows else ", before %.1f s" % rows["before"]["wall_s"])
           if a else "no cost compare ran")
    yield ("disk <= the tensors' size once", bool(a) and a.get("tensors", 0) > 0 and a["disk"] <= a["tensors"],
           "after %.1f MB vs %.1f MB%s" % (a["disk"] / 1e6, a.get("tensors", 0) / 1e6,
                                         "" if "before" not in rows else ", before %.1f MB" % (rows["before"]["disk"] / 1e6))
           if a else "no cost compare ran")
    yield ("before/after recorded (BASE_BIN)", "before" in rows and "after" in rows,
           "both" if "before" in rows and "after" in rows else "set BASE_BIN to a magpie built from main")


def wall_item(out):
    p = os.path.join(out, "wall.log")
    m = re.search(r"total wall (\d+) s \(AA_WALL (\d+)\)", open(p).read()) if os.path.exists(p) else None
    yield ("one call within its wall budget", bool(m) and int(m.group(1)) <= int(m.group(2)) + 30,
           "%s s of %s s" % (m.group(1), m.group(2)) if m else "no wall.log")


def main():
    out = sys.argv[1]
    items = [*aa_items(out), *ncu_item(out), *cost_items(out), *wall_item(out)]
    print("Issue 36 GPU acceptance")
    print("%-4s  %-68s %s" % ("", "item", "measured"))
    for name, ok, detail in items:
        print("%-4s  %-68s %s" % ("PASS" if ok else "FAIL", name, detail))
    failed = sum(1 for _, ok, _ in items if not ok)
    print("acceptance: %d of %d items passed" % (len(items) - failed, len(items)))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
