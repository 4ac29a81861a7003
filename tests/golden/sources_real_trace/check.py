"""Checks `magpie trace sources` over the real H200 trace against the fixture source tree:
every resolved kernel points at a line that really defines its symbol, the expected table
(expected.tsv) matches, ambiguous / closed-source / runtime names are reported as such."""
import csv
import json
import os
import sys

src = os.environ["MAGPIE_SOURCE_DIR"]
report = json.load(open(sys.argv[1]))
csv_path = sys.argv[2]
roots = {r["variable"]: r["path"] for r in report["roots"]}
fail = []


def expect(cond, what):
    if not cond:
        fail.append(what)


kernels = report["kernels"]
expect(len(kernels) == 46, "46 distinct GPU kernels in the trace, got %d" % len(kernels))
totals = [k["total_us"] for k in kernels]
expect(totals == sorted(totals, reverse=True), "sorted by total time")
for k in kernels:
    res = k["source_resolution"]
    expect(res in ("resolved", "unresolved", "unsupported"), k["name"][:60])
    if res == "resolved":
        var, rest = k["source_file"].split("/", 1)
        rel, line = rest.rsplit(":", 1)
        path = os.path.join(roots[var], rel)
        text = open(path).read().splitlines()
        n = int(line)
        expect(k["symbol"] in text[n - 1], "%s: %s line %d does not define %s" % (k["name"][:50], rel, n, k["symbol"]))
        expect(k["line"] == n and 0 < k["confidence"] <= 1 and not k["source_error"], k["name"][:60])
        for f in k["functor_sources"]:
            name, loc = f.split("=", 1)
            if loc:
                fv, frest = loc.split("/", 1)
                frel, fline = frest.rsplit(":", 1)
                ftext = open(os.path.join(roots[fv], frel)).read().splitlines()
                expect(name.rsplit("::", 1)[-1] in ftext[int(fline) - 1], "functor %s at %s" % (name, loc))
    else:
        expect(k["source_file"] == "" and k["confidence"] == 0 and k["source_error"], k["name"][:60])
    if k["kind"] in ("nvjet", "cublas", "cudnn", "cutlass"):
        expect(res == "unsupported" and k["source_error"] == "closed_source_library", k["name"][:60])

by_name = {k["name"]: k for k in kernels}
amb = [k for k in kernels if k["source_error"].endswith("_ambiguous")]
expect(len(amb) == 1 and "indexSelectSmallIndex" in amb[0]["name"], "one ambiguous kernel")
tu = [k for k in kernels if "elementwise_kernel_with_index" in k["name"]][0]
expect(tu["source_resolution"] == "resolved" and tu["confidence"] == 0.9 and len(tu["candidates"]) == 2 and
       tu["source_file"].endswith("cuda/RangeFactories.cu:12"), "resolved by translation-unit evidence")
expect(len(amb[0]["candidates"]) == 2 if amb else False, "both candidates listed")
tri = by_name.get("residual_scale_kernel")
expect(tri and tri["kind"] == "triton_jit" and tri["source_file"] == "$TRACES_DIR/gen_trace.py:21", "Triton kernel")
mem = by_name.get("Memset (Device)")
expect(mem and mem["kind"] == "runtime" and mem["source_resolution"] == "unsupported", "Memset")
rsqrt = [k for k in kernels if "rsqrt_kernel_cuda" in k["name"]][0]
expect(rsqrt["functor_sources"] == ["at::native::rsqrt_kernel_cuda=$PYTORCH_DIR/aten/src/ATen/native/cuda/UnaryOpsKernel.cu:4"],
       rsqrt["functor_sources"])
s = report["summary"]
expect((s["resolved"], s["unresolved"], s["unsupported"]) == (25, 1, 20), "summary %r" % s)

# The table against the reviewed expectation (kind, category, resolution, error, file:line).
rows = [[k["name"], k["kind"], k["category"], k["source_resolution"], k["source_error"], k["source_file"]] for k in kernels]
exp_path = os.path.join(src, "tests", "golden", "sources_real_trace", "expected.tsv")
if os.environ.get("MAGPIE_UPDATE_GOLDEN"):
    with open(exp_path, "w", newline="") as f:
        csv.writer(f, delimiter="\t", lineterminator="\n").writerows(rows)
expected = list(csv.reader(open(exp_path), delimiter="\t"))
expect(sorted(map(tuple, expected)) == sorted(map(tuple, rows)), "differs from expected.tsv")
for e, r in zip(sorted(expected), sorted(rows)):
    if e != r:
        print("expected:", e[1:], "\n     got:", r[1:], "\n    name:", r[0][:100])
        break

# CSV: Magpie preamble, Name/Calls/Self CUDA total + 15 columns + confidence.
lines = open(csv_path).read().splitlines()
expect(lines[0] == "# Repository Path Mappings:" and lines[2].startswith("# $PYTORCH_DIR="), lines[:3])
header = next(csv.reader([l for l in lines if not l.startswith("#")]))
expect(header[:3] == ["Name", "Calls", "Self CUDA total (us)"] and len(header) == 19 and header[-1] == "confidence", header)
expect(header[3] == "kind" and header[17] == "source_error", header)

for f in fail:
    print("FAIL:", f)
print("%d checks failed" % len(fail) if fail else "all checks passed")
sys.exit(1 if fail else 0)
