#!/usr/bin/env python3
"""GPU check of the CUDA harness (include/magpie/bench_gpu.hpp) and libmagpie_cupti.so, run by
tests/gpu/cuda_harness.sh on an NVIDIA GPU. Standard library only (numpy not needed).

  1. correctness mode on the GPU: outputs, poison of the off-by-one's skipped block;
  2. timing mode under CUDA_INJECTION64_PATH: per sample, the harness's cudaEvent time vs
     the CUPTI kernel span joined through the external correlation ids; dropped records;
  3. a launch that synchronises inside: blocking-kernel timeout reported, then disabled;
  4. ncu --clock-control none gpu__time_duration.sum on profile mode vs the CUPTI median.
Exit 0 when every check passed."""
import argparse
import csv
import io
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--bin", required=True, help="directory with vector_add, vector_add_twopass, vector_add_offbyone, sync_in_launch")
ap.add_argument("--cupti", required=True, help="path of libmagpie_cupti.so")
ap.add_argument("--cupti-dir", default="", help="directory of libcupti.so.* (prepended to LD_LIBRARY_PATH)")
ap.add_argument("--work", required=True)
ap.add_argument("--samples", type=int, default=30)
args = ap.parse_args()
FAIL = []


def check(cond, what):
    print(("ok:   " if cond else "FAIL: ") + what)
    if not cond:
        FAIL.append(what)


def env(**kw):
    e = {k: v for k, v in os.environ.items() if not k.startswith("MAGPIE_")}
    e.update({k: str(v) for k, v in kw.items()})
    return e


def read_npy(path):
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    return eval(data[10:10 + hlen].decode("latin1")), data[10 + hlen:]


def f32s(raw):
    return struct.unpack("<%df" % (len(raw) // 4), raw)


def correctness():
    out = os.path.join(args.work, "corr_ref")
    p = subprocess.run([os.path.join(args.bin, "vector_add")], capture_output=True, text=True, timeout=300,
                       env=env(MAGPIE_BENCH_PROTOCOL=1, MAGPIE_BENCH_MODE="correctness", MAGPIE_BENCH_OUT_DIR=out,
                               MAGPIE_BENCH_SEEDS="1,2,3"))
    check(p.returncode == 0, "GPU correctness run exits 0 " + p.stderr.strip())
    m = json.load(open(os.path.join(out, "manifest.json")))
    print("      device:", m["device"])
    for t in m["trials"]:
        ins = {x["name"]: x for x in t["inputs"]}
        a = f32s(read_npy(os.path.join(out, ins["a"]["pre"]))[1])
        b = f32s(read_npy(os.path.join(out, ins["b"]["pre"]))[1])
        c = f32s(read_npy(os.path.join(out, t["outputs"][0]["file"]))[1])
        good = all(c[i] == struct.unpack("<f", struct.pack("<f", a[i] + b[i]))[0] for i in range(len(c)))
        check(t["ok"] and good, "trial %d (%s): GPU c == a + b" % (t["index"], t["size"]))
    out = os.path.join(args.work, "corr_obo")
    subprocess.run([os.path.join(args.bin, "vector_add_offbyone")], capture_output=True, timeout=300,
                   env=env(MAGPIE_BENCH_PROTOCOL=1, MAGPIE_BENCH_MODE="correctness", MAGPIE_BENCH_OUT_DIR=out,
                           MAGPIE_BENCH_SEEDS="1"))
    t = json.load(open(os.path.join(out, "manifest.json")))["trials"][0]
    raw = read_npy(os.path.join(out, t["outputs"][0]["file"]))[1]  # n=1000: blocks 0..2 run, 768..999 not
    check(raw[768 * 4:] == b"\xff" * (232 * 4) and raw[:4] != b"\xff" * 4, "off-by-one: skipped block keeps the poison")


def timing(exe, commands, **kw):
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    e = env(MAGPIE_BENCH_PROTOCOL=1, MAGPIE_BENCH_MODE="timing", MAGPIE_BENCH_CTRL_IN=r_in,
            MAGPIE_BENCH_CTRL_OUT=w_out, **kw)
    p = subprocess.Popen([os.path.join(args.bin, exe)], env=e, pass_fds=(r_in, w_out), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(r_in)
    os.close(w_out)
    to_child, from_child = os.fdopen(w_in, "w"), os.fdopen(r_out, "r")
    replies = [from_child.readline().rstrip("\n")]
    for cmd in commands:
        if not replies[-1] or replies[-1].startswith("error"):
            break
        to_child.write(cmd + "\n")
        to_child.flush()
        if cmd == "stop":
            break
        replies.append(from_child.readline().rstrip("\n"))
    to_child.close()
    _, err = p.communicate(timeout=600)
    return replies, p.returncode, err


def cupti_env(path):
    ld = args.cupti_dir + (":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH") else "")
    return dict(CUDA_INJECTION64_PATH=args.cupti, MAGPIE_CUPTI_LIB=args.cupti, MAGPIE_CUPTI_OUT=path,
                LD_LIBRARY_PATH=ld)


def parse_cupti(path):
    kernels, corr_to_id, dropped, bad = [], {}, 0, 0
    for line in open(path):
        try:
            j = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if j["kind"] == "kernel":
            kernels.append(j)
        elif j["kind"] == "extcorr":
            corr_to_id[j["corr"]] = j["id"]
        elif j["kind"] == "dropped":
            dropped += j["count"]
    per_sample = {}
    for k in kernels:
        sid = corr_to_id.get(k["corr"])
        if sid is not None:
            per_sample.setdefault(sid, []).append(k)
    return kernels, per_sample, dropped, bad


def timed_run(exe, kernels_per_sample):
    path = os.path.join(args.work, exe + "_cupti.jsonl")
    if os.path.exists(path):
        os.remove(path)
    n = args.samples
    cmds = ["warmup 10"] + ["sample %d" % i for i in range(1, n + 1)] + ["stop"]
    replies, rc, err = timing(exe, cmds, MAGPIE_BENCH_COLD=1, MAGPIE_BENCH_FLUSH_BYTES=0, **cupti_env(path))
    check(rc == 0 and len(replies) == n + 2, "%s: timing conversation (rc %d) %s" % (exe, rc, err.strip()[-300:]))
    ready = json.loads(replies[0][6:])
    print("      ready:", json.dumps(ready))
    check(ready.get("blocking_kernel") is True and ready.get("cupti_markers") is True and ready["flush_bytes"] >= 2 * ready["l2_bytes"] > 0,
          "%s: blocking kernel, CUPTI marks, flush >= 2 x L2" % exe)
    kernels, per_sample, dropped, bad = parse_cupti(path)
    print("      %-6s %12s %14s %13s %7s %8s" % ("sample", "event_us", "cupti_span_us", "cupti_sum_us", "kernels", "diff_%"))
    ev, span, warnings = [], [], 0
    for r in replies[2:]:
        parts = r.split(" ", 3)
        sid, ns = int(parts[1]), int(parts[2])
        warnings += len(parts) > 3 and "blocking_kernel timeout" in parts[3]
        ks = per_sample.get(sid, [])
        if not ks:
            print("      %-6d %12.3f %14s" % (sid, ns / 1e3, "(no CUPTI record)"))
            continue
        s = max(k["end"] for k in ks) - min(k["start"] for k in ks)
        total = sum(k["end"] - k["start"] for k in ks)
        ev.append(ns)
        span.append(s)
        print("      %-6d %12.3f %14.3f %13.3f %7d %8.2f" % (sid, ns / 1e3, s / 1e3, total / 1e3, len(ks), 100.0 * (ns - s) / s))
    matched = sum(len(v) for v in per_sample.values())
    print("      records: %d kernels (%d in samples, %d outside: warm-up + blocking kernels), dropped %d, "
          "unparsable lines %d, blocking-kernel timeouts %d" % (len(kernels), matched, len(kernels) - matched, dropped, bad, warnings))
    check(len(span) == n and all(len(per_sample[i]) == kernels_per_sample for i in per_sample),
          "%s: every sample has its %d CUPTI kernel record(s)" % (exe, kernels_per_sample))
    check(dropped == 0 and bad == 0 and warnings == 0, "%s: no dropped records, no timeouts" % exe)
    me, ms = statistics.median(ev), statistics.median(span)
    print("      median event %.3f us, median CUPTI span %.3f us, event/CUPTI %.4f" % (me / 1e3, ms / 1e3, me / ms))
    check(abs(me / ms - 1) < 0.10, "%s: harness events agree with CUPTI within 10%%" % exe)
    return ms, [k for k in kernels if "spin_until_released" in k["name"]]


def sync_in_launch():
    replies, rc, err = timing("sync_in_launch", ["warmup 1", "sample 1", "sample 2", "sample 3", "stop"],
                              MAGPIE_BENCH_BLOCK_TIMEOUT_MS=300)
    print("      " + "\n      ".join(replies))
    check(rc == 0 and len(replies) == 5, "sync_in_launch: conversation completes")
    check("blocking_kernel timeout" in replies[2] and all("timeout" not in r for r in replies[3:]),
          "sync_in_launch: first sample reports the blocking-kernel timeout, later ones run without it")


def ncu_check(cupti_median_ns):
    ncu = shutil.which("ncu")
    if not ncu:
        print("note: ncu not found; CUPTI vs ncu not checked")
        return
    launches = 10
    cmd = [ncu, "--clock-control", "none", "--metrics", "gpu__time_duration.sum", "--csv",
           os.path.join(args.bin, "vector_add")]
    print("      $ MAGPIE_BENCH_MODE=profile MAGPIE_BENCH_COLD=1 MAGPIE_BENCH_PROFILE_LAUNCHES=%d %s" % (launches, " ".join(cmd)))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                       env=env(MAGPIE_BENCH_PROTOCOL=1, MAGPIE_BENCH_MODE="profile", MAGPIE_BENCH_COLD=1,
                               MAGPIE_BENCH_PROFILE_LAUNCHES=launches))
    rows = [l for l in p.stdout.splitlines() if l.startswith('"')]
    scale = {"nsecond": 1.0, "ns": 1.0, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6, "second": 1e9}
    vals = []
    for r in csv.DictReader(io.StringIO("\n".join(rows))):
        if r.get("Metric Name") == "gpu__time_duration.sum" and "vector_add" in r.get("Kernel Name", ""):
            vals.append(float(r["Metric Value"].replace(",", "")) * scale.get(r.get("Metric Unit", "nsecond"), 1.0))
    check(p.returncode == 0 and len(vals) == launches + 3, "ncu profiled %d vector_add launches (rc %d) %s" %
          (len(vals), p.returncode, (p.stderr.strip() or p.stdout.strip())[-300:] if len(vals) == 0 else ""))
    if not vals:
        return
    timed = vals[3:]  # skip the 3 warm-up launches of profile mode
    med = statistics.median(timed)
    print("      ncu gpu__time_duration.sum (us):", " ".join("%.2f" % (v / 1e3) for v in timed))
    diff = 100.0 * (cupti_median_ns - med) / med
    print("      ncu median %.3f us, CUPTI median span %.3f us, diff %+.2f%%" % (med / 1e3, cupti_median_ns / 1e3, diff))
    check(abs(diff) < 3.0, "CUPTI agrees with ncu gpu__time_duration within 3%")


os.makedirs(args.work, exist_ok=True)
print("== correctness mode on the GPU")
correctness()
print("== timing mode under CUPTI injection (cold L2, %d samples)" % args.samples)
ref_ns, spins = timed_run("vector_add", 1)
slow_ns, _ = timed_run("vector_add_twopass", 2)
print("      two-pass / one-pass CUPTI median: %.3f" % (slow_ns / ref_ns))
check(slow_ns / ref_ns > 1.05, "two-pass variant is >= 5% slower")
check(len(spins) == args.samples, "one blocking kernel per sample, outside the sample's correlation")
print("== launch that synchronises inside (blocking-kernel timeout 300 ms)")
sync_in_launch()
print("== ncu on profile mode")
ncu_check(ref_ns)
print("%d check(s) failed" % len(FAIL) if FAIL else "all GPU checks passed")
sys.exit(1 if FAIL else 0)
