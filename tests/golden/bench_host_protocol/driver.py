#!/usr/bin/env python3
"""Drives host harnesses built on include/magpie/bench.hpp through every mode of
docs/harness-protocol.md and checks what they say and write. Standard library only.

usage: driver.py BIN_DIR WORK_DIR
BIN_DIR holds: vector_add, vector_add_offbyone, mutates_input, edge (see run.sh)."""
import json
import math
import os
import struct
import subprocess
import sys

BIN, WORK = sys.argv[1], sys.argv[2]
FAILURES = []
M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def env(**kw):
    e = {k: v for k, v in os.environ.items() if not k.startswith("MAGPIE_")}
    e.update({k: str(v) for k, v in kw.items()})
    return e


# ---- .npy reader ---------------------------------------------------------------------------
def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    hlen = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + hlen].decode("latin1")
    assert (10 + hlen) % 64 == 0, "npy header not 64-byte aligned: " + path
    d = eval(header)  # the header is a Python literal dict by definition of the format
    return d["descr"], tuple(d["shape"]), data[10 + hlen:]


FMT = {"<f4": "f", "<f8": "d", "<f2": "e", "<u2": "H", "<i4": "i", "<i8": "q", "|i1": "b", "|u1": "B", "|b1": "?"}


def values(descr, raw):
    code = FMT[descr]
    n = len(raw) // struct.calcsize(code)
    return list(struct.unpack("<%d%s" % (n, code), raw))


# ---- the documented generator (docs/bench-harness.md) ---------------------------------------
def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def fnv1a64(s):
    h = 0xCBF29CE484222325
    for c in s.encode():
        h = ((h ^ c) * 0x100000001B3) & M64
    return h


def unit(seed, name, k):
    base = mix64((seed + GOLDEN) & M64) ^ fnv1a64(name)
    return (mix64((base + (k + 1) * GOLDEN) & M64) >> 11) * 2.0 ** -53


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def run(exe, timeout=120, **kw):
    return subprocess.run([os.path.join(BIN, exe)], env=env(**kw), capture_output=True, text=True, timeout=timeout)


def correctness(exe, seeds, tag):
    out = os.path.join(WORK, tag)
    p = run(exe, MAGPIE_BENCH_PROTOCOL=1, MAGPIE_BENCH_MODE="correctness", MAGPIE_BENCH_OUT_DIR=out,
            MAGPIE_BENCH_SEEDS=",".join(map(str, seeds)))
    with open(os.path.join(out, "manifest.json")) as f:
        return p, out, json.load(f)


def test_standalone():
    p = run("vector_add")
    lines = p.stdout.strip().splitlines()
    check(p.returncode == 0, "standalone vector_add exits 0")
    check(len(lines) == 4 and all(": ok" in l for l in lines), "standalone prints one ok line per size: %r" % lines)
    p = run("vector_add_offbyone")
    check("n=4099: ok" in p.stdout and "3 output elements never written" in p.stdout,
          "standalone reports the off-by-one's unwritten tail: %r" % p.stdout)
    p = run("edge")
    check(p.returncode == 1 and "edge throw: FAILED" in p.stdout, "standalone exits 1 when a size fails")


def test_correctness_vector_add():
    seeds = [17, 18, 19, 20, 21]
    p, out, m = correctness("vector_add", seeds, "va")
    check(p.returncode == 0, "correctness exits 0: " + p.stderr)
    for key, want in (("protocol", 3), ("kernel", "vector_add"), ("n_sizes", 4), ("timed_size", 3), ("backend", "host")):
        check(m.get(key) == want, "manifest %s == %r (got %r)" % (key, want, m.get(key)))
    check(m["harness"].startswith("magpie-bench-cpp/"), "manifest harness name")
    check(m["device"].startswith("host "), "manifest device")
    check(len(m["trials"]) == 5, "one trial per seed")
    check(not any(f.endswith(".tmp") for f in os.listdir(out)), "no temp files left behind")
    for i, t in enumerate(m["trials"]):
        check(t["index"] == i and t["seed"] == seeds[i] and t["size_index"] == i % 4, "trial %d header" % i)
        check(t["ok"] is True and t["error"] is None, "trial %d ok" % i)
        ins = {x["name"]: x for x in t["inputs"]}
        outs = {x["name"]: x for x in t["outputs"]}
        check(sorted(ins) == ["a", "b"] and sorted(outs) == ["c"], "trial %d tensors" % i)
        da, sa, ra = read_npy(os.path.join(out, ins["a"]["pre"]))
        _, _, rb = read_npy(os.path.join(out, ins["b"]["pre"]))
        dc, sc, rc = read_npy(os.path.join(out, outs["c"]["file"]))
        n = sa[0]
        check(da == "<f4" and dc == "<f4" and sc == (n,) and ins["a"]["shape"] == [n], "trial %d dtype/shape" % i)
        check(ins["a"]["init"] == "uniform(-1,1)", "default init recorded")
        a, b, c = values(da, ra), values(da, rb), values(dc, rc)
        step = 1 if n < 2000000 else 61  # keep the pure-Python check fast on the 4M size
        check(all(c[j] == f32(a[j] + b[j]) for j in range(0, n, step)), "trial %d: c == a + b" % i)
        gen = [f32(-1.0 + 2.0 * unit(seeds[i], "a", j)) for j in range(min(n, 2000))]
        check(gen == a[:len(gen)], "trial %d: inputs follow the documented generator" % i)
        for name in ("a", "b"):
            pre = read_npy(os.path.join(out, ins[name]["pre"]))[2]
            post = read_npy(os.path.join(out, ins[name]["post"]))[2]
            check(pre == post, "trial %d: %s not mutated" % (i, name))
    _, out2, m2 = correctness("vector_add", seeds, "va2")
    same = all(open(os.path.join(out, f), "rb").read() == open(os.path.join(out2, f), "rb").read()
               for f in os.listdir(out) if f.endswith(".npy"))
    check(same, "same seeds give byte-identical files")
    _, out3, _ = correctness("vector_add", [99], "va3")
    check(read_npy(os.path.join(out, "t0_in_a.npy"))[2] != read_npy(os.path.join(out3, "t0_in_a.npy"))[2],
          "a different seed gives different inputs")
    check(read_npy(os.path.join(out, "t0_in_a.npy"))[2] != read_npy(os.path.join(out, "t0_in_b.npy"))[2],
          "inputs with different names differ")


def test_poison_and_mutation():
    p, out, m = correctness("vector_add_offbyone", [1, 2], "obo")
    t = m["trials"][1]  # n=4099: the last 3 elements are never written
    _, shape, raw = read_npy(os.path.join(out, t["outputs"][0]["file"]))
    check(shape == (4099,) and raw[-12:] == b"\xff" * 12 and raw[-16:-12] != b"\xff" * 4,
          "unwritten outputs keep the 0xFF poison")
    check(t["ok"] is True, "a wrong result is not a harness error (the supervisor judges)")
    p, out, m = correctness("mutates_input", [5], "mut")
    ins = {x["name"]: x for x in m["trials"][0]["inputs"]}
    changed = lambda k: read_npy(os.path.join(out, ins[k]["pre"]))[2] != read_npy(os.path.join(out, ins[k]["post"]))[2]
    check(changed("a") and not changed("b"), "post files expose the mutated input only")


def test_correctness_edge():
    p, out, m = correctness("edge", [7, 8, 9, 10], "edge")
    check(p.returncode == 1, "correctness exits 1 when a trial failed (manifest still written)")
    t0, t1, t2, t3 = m["trials"]
    check(t0["ok"] and t3["ok"] and t3["size_index"] == 0, "trials of the good size pass")
    check(not t1["ok"] and "dim(3)" in (t1["error"] or ""), "setup exception -> ok:false with message: %r" % t1["error"])
    check(not t2["ok"] and "outside tensor 'out_sum'" in (t2["error"] or ""), "out-of-bounds write detected: %r" % t2["error"])
    check(t0["scalars"] == {"n": 37}, "scalars recorded")
    outs = {x["name"]: x for x in t0["outputs"]}
    ins = {x["name"]: x for x in t0["inputs"]}
    want = {"out_sum": ("float32", "<f4"), "out_d": ("float64", "<f8"), "out_h": ("float16", "<f2"),
            "out_bf": ("bfloat16", "<u2"), "out_i32": ("int32", "<i4"), "out_i64": ("int64", "<i8"),
            "out_i8": ("int8", "|i1"), "out_u8": ("uint8", "|u1"), "out_bool": ("bool", "|b1")}
    for name, (dt, descr) in want.items():
        got_descr, shape, raw = read_npy(os.path.join(out, outs[name]["file"]))
        check(outs[name]["dtype"] == dt and got_descr == descr, "%s: dtype %s / %s" % (name, dt, descr))
        src = read_npy(os.path.join(out, ins[name[4:]]["pre"]))[2] if name != "out_sum" else None
        if src is not None:
            check(raw == src, "%s equals its input bytes" % name)
    check(outs["out_bf"]["shape"] == [37, 1], "2-d shape kept")
    check("work" not in outs and "work" not in ins, "scratch buffers are not saved")
    raw = read_npy(os.path.join(out, outs["out_untouched"]["file"]))[2]
    check(raw == b"\xff" * 12 and all(math.isnan(v) for v in values("<f4", raw)), "poison is NaN for float32")
    vals = lambda k: values(read_npy(os.path.join(out, ins[k]["pre"]))[0], read_npy(os.path.join(out, ins[k]["pre"]))[2])
    check(all(v == 0.25 for v in vals("d")), "constant(0.25)")
    check(all(-5 <= v <= 5 for v in vals("i32")) and len(set(vals("i32"))) > 3, "integers(-5,5)")
    check(all(-100 <= v <= 100 for v in vals("i64")) and all(0 <= v <= 100 for v in vals("u8")), "default int ranges")
    check(set(vals("bool")) <= {False, True} and len(set(vals("bool"))) == 2, "bool inputs")
    ys = vals("y")
    check(abs(sum(ys) / len(ys) - 10) < 2, "normal(10, 2) mean")
    hs = vals("h")
    xs_h = [-1.0 + 2.0 * unit(7, "h", j) for j in range(37)]
    check(all(abs(hs[j] - xs_h[j]) <= 2 ** -11 for j in range(37)), "float16 inputs are rounded generator values")
    bits = vals("bf")
    bfs = [struct.unpack("<f", struct.pack("<I", b << 16))[0] for b in bits]
    xs_b = [-1.0 + 2.0 * unit(7, "bf", j) for j in range(37)]
    check(all(abs(bfs[j] - xs_b[j]) <= 2 ** -8 for j in range(37)), "bfloat16 inputs are rounded generator values")


EXCHANGE = {}  # the last timing run's exchange memory: {"fd": memfd}


def timing(exe, commands, exchange=True, **kw):
    """Runs exe in timing mode; returns (replies, returncode, stderr). The exchange memory (a
    memfd, as the supervisor makes it) stays open in EXCHANGE["fd"] for reading afterwards."""
    r_in, w_in = os.pipe()   # supervisor -> harness (fd 3)
    r_out, w_out = os.pipe()  # harness -> supervisor (fd 4)
    if EXCHANGE.get("fd") is not None:
        os.close(EXCHANGE.pop("fd"))
    xfd = os.memfd_create("magpie-exchange", 0)
    EXCHANGE["fd"] = xfd
    # The supervisor uses fds 3/4; here the pipes keep their own numbers (MAGPIE_BENCH_CTRL_IN/OUT).
    extra = {"MAGPIE_BENCH_EXCHANGE": xfd} if exchange else {}
    e = env(MAGPIE_BENCH_PROTOCOL=3, MAGPIE_BENCH_MODE="timing", MAGPIE_BENCH_CTRL_IN=r_in, MAGPIE_BENCH_CTRL_OUT=w_out,
            **extra, **kw)
    p = subprocess.Popen([os.path.join(BIN, exe)], env=e, pass_fds=(r_in, w_out, xfd), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(r_in)
    os.close(w_out)
    to_child = os.fdopen(w_in, "w")
    from_child = os.fdopen(r_out, "r")
    replies = [from_child.readline().rstrip("\n")]
    for cmd in commands:
        if not replies[-1] or replies[-1].startswith("error"):
            break
        if cmd is None:  # close the channel without "stop"
            break
        to_child.write(cmd + "\n")
        to_child.flush()
        if cmd == "stop":
            break
        replies.append(from_child.readline().rstrip("\n"))
    to_child.close()
    _, err = p.communicate(timeout=120)
    from_child.close()
    return replies, p.returncode, err


def test_timing():
    cmds = ["warmup 3"] + ["sample %d" % i for i in range(1, 6)] + ["stop"]
    replies, rc, err = timing("vector_add", cmds, MAGPIE_BENCH_COLD=1, MAGPIE_BENCH_SIZE=2)
    check(rc == 0, "timing exits 0 after stop (%s)" % err)
    check(replies[0].startswith("ready {"), "ready line: %r" % replies[0])
    ready = json.loads(replies[0][6:])
    for key in ("harness", "device", "timer", "l2_bytes", "flush_bytes", "size", "batch", "blocking_kernel"):
        check(key in ready, "ready has " + key)
    check(ready["timer"] == "host_clock" and ready["size"] == "n=1M+3" and ready["batch"] == 1, "ready values %r" % ready)
    want_flush = 2 * ready["l2_bytes"] if ready["l2_bytes"] else 64 << 20
    check(ready["flush_bytes"] == want_flush, "auto flush = 2x LLC (or 64 MiB)")
    check(replies[1].split()[0] == "ok" and int(replies[1].split()[1]) > 0, "warmup reply: %r" % replies[1])
    for i in range(1, 6):
        parts = replies[1 + i].split()
        check(parts[:2] == ["sample", str(i)] and int(parts[2]) > 0, "sample reply %r" % replies[1 + i])
    # Protocol 3: every sample's outputs are in the supervisor's exchange memory, as announced.
    ex = ready["exchange"]
    data = os.pread(EXCHANGE["fd"], ex["bytes"], 0)
    check(len(data) == ex["bytes"] and os.fstat(EXCHANGE["fd"]).st_size == ex["bytes"], "exchange memory sized by the harness")
    (c,) = ex["outputs"]
    n = c["shape"][0]
    check(c["name"] == "c" and c["dtype"] == "float32" and n == (1 << 20) + 3, "exchange layout %r" % c)
    got = struct.unpack_from("<%df" % n, data, c["offset"])
    a = [f32(-1.0 + 2.0 * unit(ready["seed"], "a", k)) for k in range(64)]
    b = [f32(-1.0 + 2.0 * unit(ready["seed"], "b", k)) for k in range(64)]
    check(all(got[k] == f32(a[k] + b[k]) for k in range(64)), "exchange holds c = a + b after the samples")
    replies, rc, _ = timing("vector_add", ["warmup 1", "inputs 77", "sample 9", "stop"], MAGPIE_BENCH_SIZE=0)
    ready0 = json.loads(replies[0][6:])
    got = struct.unpack_from("<4f", os.pread(EXCHANGE["fd"], 16, ready0["exchange"]["outputs"][0]["offset"]), 0)
    want = [f32(f32(-1.0 + 2.0 * unit(77, "a", k)) + f32(-1.0 + 2.0 * unit(77, "b", k))) for k in range(4)]
    check(rc == 0 and list(got) == want, "after inputs <seed>, the exchange holds the outputs for that seed: %r %r" % (got, want))
    replies, rc, _ = timing("vector_add", [], exchange=False)
    check(replies[0].startswith("error ") and "EXCHANGE" in replies[0] and rc == 1, "timing without exchange memory -> error line")
    replies, rc, err = timing("edge", ["warmup 4", "sample 1", "sample 2", "stop"], MAGPIE_BENCH_BATCH=3,
                              MAGPIE_BENCH_FLUSH_BYTES=1048576, MAGPIE_BENCH_COLD=1)
    ready = json.loads(replies[0][6:])
    check(ready["batch"] == 3 and ready["flush_bytes"] == 1048576 and ready["size"] == "ok", "batch / flush bytes / timed()")
    check("edge: launches=10" in err, "4 warm-up + 2 samples x batch 3 launches: %r" % err)
    check(ready["cold"] is True, "cold recorded")
    replies, rc, _ = timing("vector_add", ["bogus 1"])
    check(replies[-1].startswith("error ") and rc == 2, "unknown command -> error line, exit 2")
    replies, rc, _ = timing("vector_add", [], MAGPIE_BENCH_SIZE=9)
    check(replies[0].startswith("error ") and "MAGPIE_BENCH_SIZE" in replies[0] and rc == 1, "bad size -> error line")
    replies, rc, _ = timing("vector_add", ["warmup 1", None], MAGPIE_BENCH_SIZE=0)
    check(rc == 3, "channel closed without stop -> exit 3 (got %d)" % rc)
    p = run("vector_add", MAGPIE_BENCH_MODE="timing", MAGPIE_BENCH_CTRL_IN=97, MAGPIE_BENCH_CTRL_OUT=98)
    check(p.returncode == 2 and "control fds" in p.stderr, "timing without control fds -> exit 2")


def test_profile_and_errors():
    p = run("edge", MAGPIE_BENCH_MODE="profile", MAGPIE_BENCH_PROFILE_LAUNCHES=4, MAGPIE_BENCH_COLD=1)
    check(p.returncode == 0 and "edge: launches=7" in p.stderr, "profile: 3 warm-up + 4 launches: %r" % p.stderr)
    p = run("vector_add", MAGPIE_BENCH_PROTOCOL=4, MAGPIE_BENCH_MODE="correctness")
    check(p.returncode == 2 and "PROTOCOL" in p.stderr, "protocol mismatch -> exit 2")
    p = run("vector_add", MAGPIE_BENCH_MODE="nonsense")
    check(p.returncode == 2, "unknown mode -> exit 2")
    p = run("vector_add", MAGPIE_BENCH_MODE="correctness", MAGPIE_BENCH_OUT_DIR=os.path.join(WORK, "x"))
    check(p.returncode == 2 and "SEEDS" in p.stderr, "correctness without seeds -> exit 2")
    p = run("vector_add", MAGPIE_BENCH_MODE="correctness", MAGPIE_BENCH_OUT_DIR=os.path.join(WORK, "y"),
            MAGPIE_BENCH_SEEDS="1,-2")
    check(p.returncode == 2 and "seed" in p.stderr, "bad seed list -> exit 2")


def test_conversions():
    path = os.path.join(WORK, "conv.bin")
    subprocess.run([os.path.join(BIN, "convert_dump"), path], check=True)
    data = open(path, "rb").read()
    bad_h = bad_b = 0
    for off in range(0, len(data), 8):
        x, h, b = struct.unpack_from("<IHH", data, off)
        v = struct.unpack("<f", struct.pack("<I", x))[0]
        if math.isnan(v):
            ok_h = (h & 0x7C00) == 0x7C00 and (h & 0x3FF) != 0
            ok_b = (b & 0x7F80) == 0x7F80 and (b & 0x7F) != 0
        else:
            try:
                want_h = struct.unpack("<H", struct.pack("<e", v))[0]  # double -> half, RNE (v is exact)
            except OverflowError:
                want_h = 0x7C00 | (0x8000 if v < 0 else 0)
            ok_h = h == want_h
            r = x + 0x7FFF + ((x >> 16) & 1)  # RNE on the dropped 16 bits
            ok_b = b == ((r >> 16) & 0xFFFF)
        bad_h += not ok_h
        bad_b += not ok_b
    check(bad_h == 0, "float32 -> float16 RNE matches Python's struct 'e' (%d mismatches)" % bad_h)
    check(bad_b == 0, "float32 -> bfloat16 RNE (%d mismatches)" % bad_b)


for test in (test_conversions, test_standalone, test_correctness_vector_add, test_poison_and_mutation, test_correctness_edge,
             test_timing, test_profile_and_errors):
    test()
    print("ran", test.__name__)
if FAILURES:
    print("%d check(s) failed" % len(FAILURES))
    sys.exit(1)
print("all checks passed")
