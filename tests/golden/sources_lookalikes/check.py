"""Checks the reports run.sh wrote (argv: test dir, work dir). Names are looked up by the start of
the trace name, so names.txt may be reordered."""
import csv
import json
import os
import sys

here, work = sys.argv[1:]
fail = []


def expect(cond, what):
    if not cond:
        fail.append(what)


def load(name):
    report = json.load(open(os.path.join(work, name)))
    return report, report["kernels"]


def pick(kernels, prefix):
    found = [k for k in kernels if k["name"].startswith(prefix)]
    if len(found) != 1:
        fail.append("%d kernels named %s…" % (len(found), prefix))
        return {"kind": "", "source_resolution": "", "source_error": "", "source_file": "", "confidence": -1,
                "notes": "", "alternatives": [], "candidates": []}
    return found[0]


QKV = "void paged_attention_ll4mi_QKV_mfma16_kernel<0,"
REDUCE = "void paged_attention_ll4mi_reduce_kernel<"
SGL_ROPE = "void rotary_embedding_kernel<"
VLLM_ROPE = "void vllm::rotary_embedding_kernel<"
AITER_NORM = "_ZN5aiter24add_rmsnorm_quant_kernel"
SGL_ACT = "_ZN7sgl_hip10activation18act_and_mul_kernel"
ATEN_LOOP = "void at::native::elementwise_kernel<"
VLLM_NORM = "void vllm::rms_norm_kernel<"


def state(k):
    return (k["kind"], k["source_resolution"], k["source_error"], k["source_file"], round(k["confidence"], 2))


# 1. Only the vLLM look-alikes given: aiter's and SGLang's kernels must not resolve to them.
report, ks = load("vllm.json")
k = pick(ks, QKV)  # 11 template arguments / 21 parameters against vLLM's 10 / 20
expect(state(k) == ("aiter", "candidate", "below_confidence_threshold", "$VLLM_DIR/csrc/rocm/attention.cu:6", 0.5),
       "aiter QKV vs vLLM: %s" % (state(k),))
expect("signature does not match" in k["notes"] and "11 template arguments and 21 parameters" in k["notes"], k["notes"])
k = pick(ks, REDUCE)  # 7 / 9 against 6 / 8
expect(state(k)[1:] == ("candidate", "below_confidence_threshold", "$VLLM_DIR/csrc/rocm/attention.cu:18", 0.5),
       "aiter reduce vs vLLM: %s" % (state(k),))
k = pick(ks, SGL_ROPE)  # global namespace and an older signature: refused, not a 0.6 answer
expect(state(k) == ("cuda_cpp", "unresolved", "cuda_cpp_source_not_found", "", 0.0), "SGLang rope: %s" % (state(k),))
expect("not reported as a match: $VLLM_DIR/csrc/pos_encoding_kernels.cu:6" in k["notes"], k["notes"])
k = pick(ks, VLLM_ROPE)  # the same kernel after it gained cache_t and two parameters
expect(state(k) == ("vllm", "resolved", "", "$VLLM_DIR/csrc/pos_encoding_kernels.cu:6", 0.85),
       "vLLM rope: %s" % (state(k),))
expect("extends the traced signature" in k["notes"], k["notes"])
k = pick(ks, SGL_ACT)  # name read from the mangled prefix: vllm::act_and_mul_kernel is not it
expect(state(k)[:3] == ("sglang", "unresolved", "sglang_source_not_found"), "sgl_hip act: %s" % (state(k),))
expect("could not decode" in k["notes"], k["notes"])
k = pick(ks, VLLM_NORM)
expect(state(k) == ("vllm", "resolved", "", "$VLLM_DIR/csrc/layernorm_kernels.cu:5", 1.0), "rms_norm: %s" % (state(k),))
expect(report["summary"]["candidate"] == 2 and report["summary"]["resolved"] == 2, report["summary"])

# 2. aiter given: its kernels resolve there, DF16b decoded, bf16 noted.
report, ks = load("vllm_aiter.json")
k = pick(ks, QKV)
expect(state(k) == ("aiter", "resolved", "", "$AITER_DIR/csrc/cpp_itfs/pa/pa_ragged.cuh:8", 1.0), "QKV: %s" % (state(k),))
k = pick(ks, REDUCE)
expect(state(k)[1:] == ("resolved", "", "$AITER_DIR/csrc/cpp_itfs/pa/pa_ragged.cuh:21", 1.0), "reduce: %s" % (state(k),))
k = pick(ks, AITER_NORM)
expect(state(k) == ("aiter", "resolved", "", "$AITER_DIR/csrc/kernels/rmsnorm_quant_kernels.cu:7", 1.0),
       "DF16b aiter norm: %s" % (state(k),))
expect(k["demangled"].startswith("aiter::add_rmsnorm_quant_kernel<std::bfloat16_t, std::bfloat16_t, 256"), k["demangled"])
expect("dtype: bf16" in k["notes"] and "fp16" not in k["notes"], k["notes"])

# 3. Every root: SGLang's kernels resolve in SGLang; primaries win over a fork's and a test's copy.
report, ks = load("all.json")
k = pick(ks, SGL_ROPE)
expect(state(k) == ("cuda_cpp", "resolved", "", "$SGLANG_DIR/sgl-kernel/csrc/elementwise/pos_enc.cuh:6", 1.0),
       "SGLang rope: %s" % (state(k),))
k = pick(ks, VLLM_ROPE)
expect(state(k)[3] == "$VLLM_DIR/csrc/pos_encoding_kernels.cu:6", "vLLM rope with SGLang given: %s" % (state(k),))
k = pick(ks, SGL_ACT)
expect(state(k) == ("sglang", "resolved", "", "$SGLANG_DIR/sgl-kernel/csrc/elementwise/activation.cu:7", 0.9),
       "sgl_hip act: %s" % (state(k),))
k = pick(ks, ATEN_LOOP)
expect(state(k) == ("aten_native", "resolved", "", "$ATENFORK_DIR/aten/src/ATen/native/cuda/CUDALoops.cuh:9", 0.9),
       "fork copy: %s" % (state(k),))
expect(k["alternatives"] == ["elementwise_kernel=$ATENFORK_DIR/aten/src/ATen/native/cuda/maca_kernels/CUDALoops_copy.cuh:9"],
       k["alternatives"])
expect("primary definition preferred over 1 copy" in k["notes"], k["notes"])
k = pick(ks, VLLM_NORM)
expect(state(k) == ("vllm", "resolved", "", "$VLLM_DIR/csrc/layernorm_kernels.cu:5", 0.9), "test copy: %s" % (state(k),))
expect(k["alternatives"] == ["rms_norm_kernel=$REFS_DIR/tests/kernels/rms_norm_reference.cu:5"], k["alternatives"])

# 4. Library kernels without roots: kind, resolution, error and the advice.
_, ks = load("classify.json")
rows = [r for r in csv.reader(open(os.path.join(here, "classify.tsv")), delimiter="\t") if r and not r[0].startswith("#")]
expect(len(ks) == len(rows), "classify: %d rows, %d kernels" % (len(rows), len(ks)))
for k, (name, kind, res, err, hint) in zip(ks, rows):
    got = (k["kind"], k["source_resolution"], k["source_error"])
    expect(k["name"] == name and got == (kind, res, err) and hint in k["notes"],
           "%s\n   expected %s + %r\n        got %s  notes: %s" % (name[:90], (kind, res, err), hint, got, k["notes"]))

# 5. -k counts kernels only.
top = [k["name"] for k in json.load(open(os.path.join(work, "top2.json")))["kernels"]]
expect(top == ["big_kernel", "mid_kernel"], "-k 2 mapped %s" % top)
every = [k["name"] for k in json.load(open(os.path.join(work, "all_rows.json")))["kernels"]]
expect(len(every) == 6 and every[0].startswith("Memcpy"), "without -k every row is listed: %s" % every)

for f in fail:
    print("FAIL:", f)
print("%d checks failed" % len(fail) if fail else "all checks passed")
sys.exit(1 if fail else 0)
