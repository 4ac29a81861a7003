#!/usr/bin/env bash
# `magpie trace sources` on the declaration forms real CUDA/Triton code uses (fixture tree in
# tree/, written for this test): SFINAE return types, __launch_bounds__ and macros before the
# name, templates across lines, extern "C", kernels defined by macro expansion (same file and
# another file), namespaces through #if/#else branches and #if 0, Triton suffixes; and the
# library classification of names copied from a real vLLM B200 / SGLang MI300X trace.
set -euo pipefail
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
"$MAGPIE_BIN" trace sources --help >/dev/null 2>&1 || { echo "skip: this build has no 'trace sources'"; exit 77; }
here="$MAGPIE_SOURCE_DIR/tests/golden/sources_forms"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$MAGPIE_BIN" trace sources --names-file "$here/names.txt" --json -r "$here/tree" > "$work/forms.json"
"$MAGPIE_BIN" trace sources --kernel "void demo::gelu_act_kernel(float*, float const*, int)" -r "$here/tree" \
  2>/dev/null | grep -q 'act_kernels.cu:6 (macro)' || { echo "FAIL: the table does not mark the macro expansion"; exit 1; }
grep -v '^#' "$here/libraries.tsv" | cut -f1 > "$work/libraries.txt"
"$MAGPIE_BIN" trace sources --names-file "$work/libraries.txt" --json > "$work/libraries.json" 2>/dev/null
python3 - "$here" "$work/forms.json" "$work/libraries.json" <<'PY'
import csv, json, sys
here, forms, libs = sys.argv[1:]
fail = []
def rows(path):
    return [r for r in csv.reader(open(path), delimiter="\t") if r and not r[0].startswith("#")]
kernels = json.load(open(forms))["kernels"]
expected = rows(here + "/expected.tsv")
if len(kernels) != len(expected):
    fail.append("expected %d kernels, got %d" % (len(expected), len(kernels)))
for k, (prefix, kind, res, src, conf, dkind) in zip(kernels, expected):
    got = (k["kind"], k["source_resolution"], k["source_file"], "%.2f" % k["confidence"], k["definition_kind"])
    if not k["name"].startswith(prefix) or got != (kind, res, src, conf, dkind):
        fail.append("%s\n   expected %s\n        got %s  notes: %s" % (prefix[:90], (kind, res, src, conf, dkind), got, k["notes"]))
by = {k["name"].split("(")[0]: k for k in kernels}
gelu = by["void demo::gelu_act_kernel"]
if gelu["macro_definition"] != "DEFINE_ACT_KERNEL=$TREE_DIR/csrc/act_macros.cuh:4" or "expanding macro" not in gelu["notes"]:
    fail.append("macro expansion reported: %r / %r" % (gelu["macro_definition"], gelu["notes"]))
dev = by["devKernel_AllReduce_Sum_f32_RING_LL"]
if dev["macro_definition"] != "DEFINE_DEV_KERNEL=$TREE_DIR/csrc/dev_kernels.cu:6":
    fail.append("same-file macro: %r" % dev["macro_definition"])
sf = [k for k in kernels if "fused_add_rms_norm_kernel" in k["name"]]
for k in sf:
    if "overload chosen by its enable_if condition" not in k["notes"]:
        fail.append("SFINAE note missing: " + k["notes"])
idx = [k for k in kernels if "indexSelectSmallIndex" in k["name"]][0]
if "not matched" in idx["notes"]:
    fail.append("namespace lost through #if/#else: " + idx["notes"])
loose = by["kernel_unified_attention_2d"]
if loose["alternatives"] != ["kernel_unified_attention_3d=$TREE_DIR/ops/unified_attention.py:12"] or "not one Triton" not in loose["notes"]:
    fail.append("suffix alternatives: %r / %s" % (loose["alternatives"], loose["notes"]))
if "specialisation suffix" not in by["kernel_unified_attention_0d1d2d3de4"]["notes"]:
    fail.append("Triton suffix note")
lk = json.load(open(libs))["kernels"]
for k, (name, kind, res, err, hint) in zip(lk, rows(here + "/libraries.tsv")):
    got = (k["kind"], k["source_resolution"], k["source_error"])
    if k["name"] != name or got != (kind, res, err) or hint not in k["notes"]:
        fail.append("%s\n   expected %s + %r\n        got %s  notes: %s" % (name[:90], (kind, res, err), hint, got, k["notes"]))
for f in fail:
    print("FAIL:", f)
print("%d checks failed" % len(fail) if fail else "all checks passed")
sys.exit(1 if fail else 0)
PY
