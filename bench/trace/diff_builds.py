#!/usr/bin/env python3
"""Differential check of two magpie builds on traces (not a test: a tool for reader changes).

Runs `trace gap`, `trace report --no-html` and `trace report --tracelens-compat --no-html` of
both builds on each trace and on mutated copies (truncations, byte flips, insertions, deletions,
another JSON layout), and compares exit code, stdout, stderr and every output file byte for
byte, except timing fields ("seconds", "elapsed" ...) and the output paths themselves.

Usage: bench/trace/diff_builds.py OLD_BIN NEW_BIN TRACE... [--mutants N] [--seed S] [--work DIR]
Prints one line per difference and a summary; exits 1 when any output differs.
"""
import argparse
import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import zlib

COMMANDS = [
    ["trace", "gap"],
    ["trace", "report", "--no-html"],
    ["trace", "report", "--tracelens-compat", "--no-html"],
]
# Keys whose values are wall-clock measurements, and text that names the output directory.
TIMING_KEY = re.compile(r'"(seconds|elapsed_s|elapsed|wall_s|read_seconds|duration_s|timestamp|created|generated_at)": [^,}\n]*')


def load_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] != b"\x1f\x8b":
        return data
    try:
        return gzip.decompress(data)
    except (EOFError, OSError, zlib.error):  # a truncated or damaged gzip: what inflates
        return zlib.decompressobj(wbits=47).decompress(data)


def mutants(data, n, rng):
    """Byte-level damage of a JSON trace, and the same events in other layouts."""
    out = []
    try:
        doc = json.loads(data)
        out.append(("compact", json.dumps(doc, separators=(",", ":")).encode()))
        out.append(("indented", json.dumps(doc, indent=1).encode()))
        out.append(("spaced", json.dumps(doc, separators=(" , ", " : ")).encode()))
    except ValueError:
        pass
    for i in range(n):
        kind = rng.choice(["truncate", "flip", "insert", "delete"])
        b = bytearray(data)
        at = rng.randrange(max(1, len(b)))
        if kind == "truncate":
            b = b[:at]
        elif kind == "flip":
            b[at] = rng.choice(b'{}[]",:0123456789 \\-.eE\x00\x1f\x7f\xff') if b else 0
        elif kind == "insert":
            b[at:at] = rng.choice([b",", b'"', b"[", b"}", b" ", b"\\u00", b"1e999", b"-", b"\n"])
        else:
            del b[at:at + rng.randrange(1, 64)]
        out.append(("%s%d@%d" % (kind, i, at), bytes(b)))
    return out


def run(binary, args, trace, outdir):
    os.makedirs(outdir, exist_ok=True)
    cmd = [binary, "-q"] + args + [trace, "-o", outdir]
    p = subprocess.run(cmd, capture_output=True, timeout=600)
    files = {}
    for root, _, names in os.walk(outdir):
        for name in names:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, outdir)
            with open(path, "rb") as f:
                files[rel] = f.read()
    return p.returncode, p.stdout, p.stderr, files


def normalise(blob, outdir):
    text = blob.replace(outdir.encode(), b"<OUT>")
    if rel_is_gz(text):
        return text
    return TIMING_KEY.sub(lambda m: '"%s": <t>' % m.group(1), text.decode("utf-8", "replace")).encode()


def rel_is_gz(blob):
    return blob[:2] == b"\x1f\x8b"


def compare(old, new, trace_path, work):
    diffs = []
    for args in COMMANDS:
        res = []
        for tag, binary in (("old", old), ("new", new)):
            outdir = os.path.join(work, tag)
            shutil.rmtree(outdir, ignore_errors=True)
            rc, so, se, files = run(binary, args, trace_path, outdir)
            res.append((rc, normalise(so, outdir), normalise(se, outdir),
                        {k: normalise(v, outdir) for k, v in files.items()}))
        (rc0, so0, se0, f0), (rc1, so1, se1, f1) = res
        what = " ".join(args)
        if rc0 != rc1:
            diffs.append("%s: exit %d vs %d" % (what, rc0, rc1))
        if so0 != so1:
            diffs.append("%s: stdout differs" % what)
        if se0 != se1:
            diffs.append("%s: stderr differs:\n  old: %r\n  new: %r" % (what, se0[-300:], se1[-300:]))
        for k in sorted(set(f0) | set(f1)):
            if f0.get(k) != f1.get(k):
                diffs.append("%s: %s differs" % (what, k))
    return diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--mutants", type=int, default=20, help="damaged copies per trace (default 20)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default=None, help="scratch directory (default: a new temporary one)")
    a = ap.parse_args()
    # Both builds read this checkout's GPU spec table (the report's roofline), wherever they lie.
    os.environ.setdefault("MAGPIE_DATA_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data"))
    rng = random.Random(a.seed)
    work = a.work or tempfile.mkdtemp(prefix="magpie-diff-")
    cases = total = 0
    failed = []
    for t in a.traces:
        data = load_bytes(t)
        variants = [("original", None)] + (mutants(data, a.mutants, rng) if a.mutants else [])
        for name, blob in variants:
            path = t
            if blob is not None:
                path = os.path.join(work, "case-rank-0.pt.trace.json")
                with open(path, "wb") as f:
                    f.write(blob)
            d = compare(a.old, a.new, path, work)
            cases += 1
            total += len(COMMANDS)
            if d:
                failed.append((t, name, d))
                print("DIFF %s [%s]" % (t, name))
                for line in d:
                    print("  " + line)
    print("%d traces x variants = %d cases, %d command runs per build, %d cases differ" %
          (len(a.traces), cases, total, len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
