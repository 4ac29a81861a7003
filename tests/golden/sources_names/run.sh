#!/usr/bin/env bash
# `magpie trace sources` on name lists: Triton / inductor / ambiguous / unknown names, a gap
# CSV as input, no roots (classification only, which root to pass), bad roots, usage errors.
set -euo pipefail
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
"$MAGPIE_BIN" trace sources --help >/dev/null 2>&1 || { echo "skip: this build has no 'trace sources'"; exit 77; }
fx="$MAGPIE_SOURCE_DIR/tests/fixtures/kernel_sources"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > names.txt <<'N'
_rms_norm_fwd_kernel
_fwd_kernel
triton_poi_fused_mul_silu_0
triton_poi_fused_add_0
my_totally_unknown_kernel
void vllm::rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16 const*, float, int, int)
ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)
sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_execute_kernel__5x_cublas
N
"$MAGPIE_BIN" trace sources --names-file names.txt --json -r "$fx/vllm_like" "$fx/inductor_cache" > a.json
"$MAGPIE_BIN" trace sources --names-file names.txt --json > none.json 2> none.err
printf 'Name,Calls,Self CUDA total (us),Avg time (us),%% Total,Input Shapes\n_rms_norm_fwd_kernel,3,30.00,10.00,100.00,\n' > gap_analysis.csv
"$MAGPIE_BIN" trace sources --gap-csv gap_analysis.csv -r "$fx/vllm_like" -o out > table.txt
set +e
"$MAGPIE_BIN" trace sources --kernel x -r "$fx/no-such-root" > /dev/null 2> badroot.err; rc_bad=$?
"$MAGPIE_BIN" trace sources > /dev/null 2> empty.err; rc_empty=$?
"$MAGPIE_BIN" trace sources --bogus-flag > /dev/null 2>&1; rc_usage=$?
set -e
python3 - "$rc_bad" "$rc_empty" "$rc_usage" <<'PY'
import json, sys
rc_bad, rc_empty, rc_usage = map(int, sys.argv[1:])
a = {k["name"].split("(")[0]: k for k in json.load(open("a.json"))["kernels"]}
none = json.load(open("none.json"))["kernels"]
fail = []
def expect(c, w):
    if not c: fail.append(w)
k = a["_rms_norm_fwd_kernel"]
expect(k["kind"] == "triton_jit" and k["source_file"] == "$VLLM_LIKE_DIR/vllm/ops/rms_norm_triton.py:14", k)
expect(k["test_file"].endswith("tests/kernels/test_rms_norm.py") and k["baseline_ref_symbol"] == "ref_rms_norm", k)
expect(k["category"] == "layernorm", k["category"])
expect(a["_fwd_kernel"]["source_error"] == "triton_source_ambiguous" and len(a["_fwd_kernel"]["candidates"]) == 2, a["_fwd_kernel"])
expect(a["triton_poi_fused_mul_silu_0"]["source_resolution"] == "resolved", "inductor copies collapse")
expect(a["triton_poi_fused_add_0"]["source_error"] == "inductor_source_ambiguous", "two graphs, two bodies")
u = a["my_totally_unknown_kernel"]
expect(u["source_resolution"] == "unresolved" and u["source_error"] == "source_not_found" and u["kind"] == "unknown", u)
v = a["void vllm::rms_norm_kernel<c10::BFloat16, 8>"]
expect(v["kind"] == "vllm" and v["source_error"] == "vllm_source_not_found" and "vllm-project/vllm" in v["notes"], v)
n = a["ncclDevKernel_AllReduce_Sum_f32_RING_LL"]
expect(n["kind"] == "nccl" and n["category"] == "communication" and n["source_resolution"] == "unresolved", n)
c = a["sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_execute_kernel__5x_cublas"]
expect(c["source_resolution"] == "unsupported" and c["kind"] == "cublas", c)
for k in none:
    if k["source_resolution"] != "unsupported":
        expect(k["source_error"] == "no_repo_for_kind" and "pass" in k["notes"], k["name"])
expect("no --kernel-source-repos" in open("none.err").read(), "warning without roots")
rows = [l for l in open("out/kernel_sources.csv").read().splitlines() if not l.startswith("#")]
expect(rows[0].startswith("Name,kind,category,source_repo") and rows[1].startswith("_rms_norm_fwd_kernel,triton_jit"), rows[:2])
expect("resolved" in open("table.txt").read(), "table on stdout")
expect(rc_bad == 1 and "does not exist" in open("badroot.err").read(), "bad root is an error")
expect(rc_empty == 1 and "no kernel names" in open("empty.err").read(), "no input")
expect(rc_usage == 2, "usage error exit 2")
for f in fail: print("FAIL:", f)
print("all checks passed" if not fail else "%d failed" % len(fail))
sys.exit(1 if fail else 0)
PY
