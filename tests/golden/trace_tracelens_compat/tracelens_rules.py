#!/usr/bin/env python3
"""TraceLens's default rules, written independently of magpie (research tracelens.md §1.4, §2.1,
§2.3, §2.5), to cross-check `magpie trace ... --tracelens-compat`.

Prints JSON: the GPU timeline of the linked GPU events (TraceLens's default), the same over all
GPU events, and each launcher name's summed direct kernel time (TraceLens's ops_summary).
Usage: tracelens_rules.py TRACE.json[.gz]
"""
import gzip
import json
import re
import sys

GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    d = json.loads(raw)
    return d["traceEvents"] if isinstance(d, dict) else d


def link(events):
    """Marks linked GPU events (e['tree']) and their runtime parent (e['parent'])."""
    key = None
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "launch" in e.get("name", "").lower():
            key = "correlation" if "correlation" in e.get("args", {}) else "External id"
            break
    if key is None:
        return
    starts, ends, by_ptid, gpu_by_key = {}, {}, {}, {}
    for i, e in enumerate(events):
        a = e.get("args", {})
        if e.get("cat") == "ac2g":
            (starts if e.get("ph") == "s" else ends if e.get("ph") == "f" else {})[e.get("id")] = e
        if "pid" in e and "tid" in e and key in a:
            by_ptid[(e["pid"], e["tid"], a[key])] = i
        if e.get("cat") in GPU_CATS and key in a:
            gpu_by_key.setdefault(a[key], []).append(i)
    for i, e in enumerate(events):
        if e.get("cat") not in ("cuda_runtime", "cuda_driver") or key not in e.get("args", {}):
            continue
        k = e["args"][key]
        if e.get("name") in ("cudaGraphLaunch", "hipGraphLaunch"):
            targets = gpu_by_key.get(k, [])
        elif k in starts and k in ends:
            f = ends[k]
            j = by_ptid.get((f.get("pid"), f.get("tid"), k))
            targets = [j] if j is not None and events[j].get("cat") in GPU_CATS else []
        else:
            targets = []
        for j in targets:
            events[j]["tree"] = True
            events[j]["parent"] = i


def host_tree(events):
    """Parent links of cpu_op / runtime events: stable ts sort per (pid, tid), TraceLens's bleed rule."""
    by_thread = {}
    for i, e in enumerate(events):
        if e.get("cat") in ("cpu_op", "cuda_runtime", "cuda_driver") and "ts" in e:
            by_thread.setdefault((e.get("pid"), e.get("tid")), []).append(i)
    for idx in by_thread.values():
        idx.sort(key=lambda i: events[i]["ts"])
        stack = []
        for i in idx:
            e = events[i]
            end = e["ts"] + e.get("dur", 0)
            while stack and e["ts"] >= stack[-1][1]:
                stack.pop()
            skip = False
            while stack and end > stack[-1][1]:
                if stack[-1][1] - e["ts"] < 1.0 and len(stack) >= 2:
                    stack.pop()
                else:
                    skip = True
                    break
            if skip:
                continue
            if stack:
                e["host_parent"] = stack[-1][0]
            stack.append((i, end))


def merge(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def length(m):
    return sum(e - s for s, e in m)


def subtract(a, b):
    out = []
    for s, e in a:
        cur = s
        for bs, be in b:
            if be <= cur or bs >= e:
                continue
            if bs > cur:
                out.append([cur, bs])
            cur = max(cur, be)
        if cur < e:
            out.append([cur, e])
    return out


def is_comm(name):
    n = name.lower()
    return "nccl" in n or "rccl" in n or "cross_device_reduce" in n


def timeline(gpu):
    comp, comm, copy, allv = [], [], [], []
    for e in gpu:
        iv = [e["ts"], e["ts"] + e.get("dur", 0)]
        allv.append(iv)
        if e["cat"] == "gpu_memcpy":
            copy.append(iv)
        elif is_comm(e["name"]):
            comm.append(iv)
        else:
            comp.append(iv)
    A, C, M, P = merge(allv), merge(comp), merge(comm), merge(copy)
    total = A[-1][1] - A[0][0]
    return {"total_time": total, "computation_time": length(C), "exposed_comm_time": length(subtract(M, C)),
            "exposed_memcpy_time": length(subtract(subtract(P, C), M)), "busy_time": length(A),
            "idle_time": total - length(A)}


def ops_summary(events):
    per_launcher = {}
    for e in events:
        if e.get("cat") not in GPU_CATS or not e.get("tree") or is_comm(e["name"]):
            continue
        p = e["parent"]
        launcher = p
        q = events[p].get("host_parent")
        while q is not None:
            c = events[q]
            if c.get("cat") == "cpu_op" and c.get("name") != "execute":
                launcher = q
                break
            if c.get("cat") != "cpu_op":
                break
            q = c.get("host_parent")
        per_launcher.setdefault(launcher, []).append([e["ts"], e["ts"] + e.get("dur", 0)])
    by_name = {}
    for l, iv in per_launcher.items():
        by_name[events[l]["name"]] = by_name.get(events[l]["name"], 0.0) + length(merge(iv))
    return by_name


def main():
    events = [e for e in load(sys.argv[1]) if isinstance(e, dict)]
    link(events)
    host_tree(events)
    gpu = [e for e in events if e.get("cat") in GPU_CATS]
    linked = [e for e in gpu if e.get("tree")]
    print(json.dumps({"gpu_events": len(gpu), "linked": len(linked), "timeline_linked": timeline(linked),
                      "timeline_all": timeline(gpu), "ops_summary_direct_us": ops_summary(events)}))


if __name__ == "__main__":
    main()
