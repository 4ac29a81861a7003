// Kernel classification rules (see classify.h). Each rule is a plain substring / prefix test;
// the order below is the contract (documented in docs/source-mapping.md).
#include "source/classify.h"

#include <cctype>
#include <initializer_list>

#include "core/strings.h"

namespace magpie::source {
namespace {

bool any_of(const std::string& s, std::initializer_list<std::string_view> needles) {
  for (auto n : needles) if (contains(s, n)) return true;
  return false;
}
bool starts_any(const std::string& s, std::initializer_list<std::string_view> prefixes) {
  for (auto p : prefixes) if (starts_with(s, p)) return true;
  return false;
}

/// "sm90_xmma_…", "sm80_…": an sm<digits>_ prefix.
bool has_sm_prefix(const std::string& s) {
  if (!starts_with(s, "sm") || s.size() < 5) return false;
  size_t i = 2;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  return i > 2 && i < s.size() && s[i] == '_';
}

/// "_sm100f", "_sm100a", "_sm90": an sm<digits>[letter] suffix at the end.
bool has_sm_suffix(std::string_view s) {
  size_t p = s.rfind("_sm");
  if (p == std::string_view::npos) return false;
  size_t i = p + 3, d = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == d) return false;
  if (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
  return i == s.size();
}

/// TensorRT-LLM-gen cubins: "fmhaSm100aKernel_…", "bmm_…_sm100f", "gemm_…_sm100a",
/// "gemmGatedAct_…_sm100a", "batchedGemm…_sm100a".
bool is_trtllm_gen(const std::string& s) {
  if (starts_with(s, "fmhaSm") && contains(s, "Kernel")) return true;
  return starts_any(s, {"bmm_", "gemm_", "gemmGatedAct_", "batchedGemm"}) && has_sm_suffix(s) && is_identifier(s);
}

struct category_rule {
  const char* category;
  std::initializer_list<std::string_view> keywords;
};

// Upstream Magpie's lists in upstream Magpie's order, with NVIDIA/PyTorch spellings added; communication first.
const category_rule k_categories[] = {
    {"communication", {"nccl", "AllReduce", "AllGather", "ReduceScatter", "SendRecv", "Broadcast", "all_reduce",
                       "cross_device_reduce", "custom_all_reduce"}},
    {"attention", {"attention", "fmha", "Fmha", "unified_attention", "paged_attention", "flash_fwd", "flash_bwd",
                   "FlashAttn", "flash_attn", "mha_", "_attn_", "attn_fwd", "attn_bwd", "sdpa", "mla_"}},
    {"kv_cache", {"reshape_and_cache", "kv_cache", "KVCache", "paged_kv"}},
    {"router", {"topk", "bitmatrix", "routing", "ragged_tensor", "MoeSorting", "moe_sorting", "topkGating",
                "MoeGating", "moe_align"}},
    {"moe_gemm", {"matmul_ogs", "_ogs_", "MoeFlatmm", "moe_flatmm", "MoeGemm", "moe_gemm", "moe"}},
    {"gemm", {"Cijk_", "gemm", "Gemm", "GEMM", "wvSplitK", "wvSpltK", "DeviceGemmWmma", "matmul", "nvjet_", "gemv",
              "xmma_", "cutlass_80_tensorop", "tensorop", "dot_kernel", "bmm"}},
    {"layernorm", {"rmsnorm", "layernorm", "Rmsnorm", "Layernorm", "rms_norm", "layer_norm", "LayerNorm", "RMSNorm",
                   "RowwiseMoments", "GroupNorm", "group_norm"}},
    {"softmax", {"softmax", "Softmax", "SoftMax"}},
    {"copy", {"copy", "Copy", "direct_copy", "Memcpy", "memcpy", "cat_array", "CatArray", "transpose"}},
    {"elementwise", {"elementwise", "Fill", "FillFunctor", "vectorized_elementwise", "silu_and_mul", "gelu", "Gelu",
                     "silu", "act_and_mul", "triton_poi_", "Memset", "memset"}},
    {"indexing", {"index", "Index", "gather", "scatter", "embedding", "Embedding"}},
    {"reduce", {"reduce", "Reduce", "argmax", "argmin", "sum_bitmatrix", "triton_red_", "triton_per_"}},
    {"blit", {"rocclr_copy", "Blit", "blit", "__amd_rocclr"}},
    {"annotation", {"execute_context", "## Call", "ProfilerStep"}},
};

/// The dtype a type spelling names ("" when none): the CUDA/HIP/PyTorch/CK/CUTLASS spellings
/// and the C++23 names libiberty prints for ROCm's `DF16b` / `DF16_` manglings.
const char* dtype_of_type(std::string_view t) {
  if (t == "float") return "fp32";
  if (t == "double") return "fp64";
  for (std::string_view b : {"c10::BFloat16", "__nv_bfloat16", "__hip_bfloat16", "hip_bfloat16", "std::bfloat16_t",
                             "__bf16", "ck_tile::bf16_t", "ck::bhalf_t", "cutlass::bfloat16_t"})
    if (t == b) return "bf16";
  for (std::string_view h : {"c10::Half", "__half", "half", "_Float16", "std::float16_t", "__fp16", "ck_tile::fp16_t",
                             "ck::half_t", "cutlass::half_t"})
    if (t == h) return "fp16";
  for (std::string_view f : {"c10::Float8_e4m3fn", "c10::Float8_e4m3fnuz", "c10::Float8_e5m2", "__nv_fp8_e4m3",
                             "__hip_fp8_e4m3_fnuz", "ck_tile::fp8_t", "ck::f8_t", "cutlass::float_e4m3_t"})
    if (t == f) return "fp8";
  if (t == "signed char" || t == "char" || t == "unsigned char") return "8-bit";
  return "";
}

/// Qualified identifiers ("a::b::c") of `s`, in order.
std::vector<std::string> identifier_chains(std::string_view s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    bool start = std::isalpha(static_cast<unsigned char>(c)) || c == '_';
    if (!start || (i > 0 && (std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_'))) { ++i; continue; }
    size_t j = i;
    while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' ||
                            (s[j] == ':' && j + 1 < s.size() && s[j + 1] == ':')))
      j += s[j] == ':' ? 2 : 1;
    out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

/// `tag` occurs in `s`; the short tags "f16" / "f32" only when not directly after a letter
/// ("f16" is not inside "bf16").
bool has_tag(const std::string& s, std::string_view tag) {
  bool bounded = tag == "f16" || tag == "f32";
  for (size_t p = s.find(tag); p != std::string::npos; p = s.find(tag, p + 1))
    if (!bounded || p == 0 || !std::isalpha(static_cast<unsigned char>(s[p - 1]))) return true;
  return false;
}

/// dtype facts from template arguments (top level first, else any type inside them) and
/// library names. `lname` is the lower-cased kernel name ("" for a name still mangled).
void add_dtype_notes(const parsed_kernel_name& n, const std::string& lname, std::vector<std::string>* notes) {
  std::vector<std::string> dtypes;
  auto add = [&](const char* d) {
    if (*d == '\0') return;
    for (const auto& x : dtypes) if (x == d) return;
    dtypes.emplace_back(d);
  };
  for (const auto& a : n.template_args) add(dtype_of_type(a));
  if (dtypes.empty())
    for (const auto& a : n.template_args)
      for (const auto& id : identifier_chains(a)) add(dtype_of_type(id));
  for (auto [tag, d] : {std::pair{"bf16", "bf16"}, {"fp16", "fp16"}, {"f16", "fp16"}, {"fp32", "fp32"},
                        {"f32", "fp32"}, {"tf32", "tf32"}, {"fp8", "fp8"}, {"e4m3", "fp8"}, {"int8", "int8"},
                        {"sgemm", "fp32"}, {"hgemm", "fp16"}, {"mxfp4", "mxfp4"}}) {
    if (has_tag(lname, tag)) add(d);
  }
  if (!dtypes.empty()) notes->push_back("dtype: " + join(dtypes, ","));
}

/// "128x256x64" style tile sizes and "_tn"/"_nt" layouts in library kernel names.
void add_shape_notes(const std::string& s, std::vector<std::string>* notes) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i])) || (i > 0 && std::isalnum(static_cast<unsigned char>(s[i - 1]))))
      continue;
    size_t j = i;
    int groups = 0;
    while (j < s.size()) {
      size_t k = j;
      while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
      if (k == j) break;
      ++groups;
      j = k;
      if (j < s.size() && s[j] == 'x' && j + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[j + 1]))) ++j;
      else break;
    }
    if (groups >= 2) {
      notes->push_back("tile: " + s.substr(i, j - i));
      break;
    }
  }
  for (std::string_view lay : {"_nn", "_nt", "_tn", "_tt", "_NN", "_NT", "_TN", "_TT"}) {
    size_t p = s.find(lay);
    if (p != std::string::npos && (p + 3 == s.size() || s[p + 3] == '_')) {
      notes->push_back("layout: " + to_lower(lay.substr(1)));
      break;
    }
  }
}

void set_unsupported(kernel_class* c, const char* kind, const char* error, const char* hint) {
  c->kind = kind;
  c->mode = lookup_mode::none;
  c->unsupported_error = error;
  if (hint && *hint) c->notes.emplace_back(hint);
}

/// MIOpen's own kernels (ROCm's DNN library): OpenCL (.cl), HIP and iGEMMgen assembly (.s) under
/// MIOpen's src/kernels, all launched under plain (unmangled) names.
bool is_miopen(const parsed_kernel_name& n, const std::string& s) {
  if (n.is_cpp_signature || !is_identifier(s)) return false;
  if (starts_with(s, "igemm_") && contains(s, "_gtc")) return true;
  return starts_any(s, {"MIOpen", "miopen", "mloPooling", "SubTensorOpWith", "Op1dTensor", "Op2dTensor", "Op3dTensor",
                        "Op4dTensor", "Op5dTensor", "OpTensorFwdBias", "OpTensorLeadingOnes", "transpose_NCHW2CNHW",
                        "transpose_CNHW2NCHW", "transpose_NCHW2Vec", "transpose_packed_MN2NM", "batched_transpose_",
                        "UniversalTranspose", "Col2Im2d", "Col2Im3d", "Im2Col", "Im2d2Col", "Im3d2Col", "naive_conv_",
                        "gridwise_convolution_", "gridwise_generic_reduce"});
}

std::string miopen_advice(const std::string& s) {
  std::string what = starts_with(s, "igemm_") ? "an implicit-GEMM convolution in assembly generated by iGEMMgen"
                     : contains(s, "ranspose") ? "a layout transpose MIOpen adds around a convolution whose kernel "
                                                 "wants another layout (try channels_last tensors)"
                                               : "a convolution / tensor-op kernel";
  return "MIOpen kernel (ROCm's DNN library): " + what + "; its source is MIOpen's src/kernels "
         "(github.com/ROCm/MIOpen: OpenCL .cl, HIP, assembly .s), not your project. MIOpen picks it per problem: "
         "tune with MIOPEN_FIND_MODE=NORMAL and MIOPEN_FIND_ENFORCE=SEARCH, change the layout or dtype, or replace "
         "the op";
}

/// ROCm library kernels without a C++ definition to look up: MIOpen's, aiter's assembly.
bool classify_rocm_library(const parsed_kernel_name& n, const std::string& s, kernel_class* c) {
  if (is_miopen(n, s)) {
    set_unsupported(c, "miopen", "miopen_library_kernel", miopen_advice(s).c_str());
    return true;
  }
  if (starts_with(n.qualified_name, "aiter::") && n.param_count < 0 && n.template_args.empty() && !n.name_only) {
    // `_ZN5aiter<len><name>E`: the symbol of an aiter assembly kernel loaded from a code object.
    set_unsupported(c, "aiter", "prebuilt_code_object",
                    "aiter assembly kernel shipped as a prebuilt code object (aiter's hsa/<gfx arch>/…/*.co, listed by "
                    "name in the .csv beside it); its source is not public: tune it through aiter's tuned-config "
                    "CSVs or compare with aiter's CK / Triton implementation of the op");
    return true;
  }
  return false;
}

/// Closed-source, generated or non-kernel names. Returns true when it classified `c`.
bool classify_unsupported(const parsed_kernel_name& n, const std::string& s, kernel_class* c) {
  if (starts_any(s, {"execute_context", "## Call", "ProfilerStep", "## "})) {
    set_unsupported(c, "annotation", "not_a_kernel", "profiler annotation, not a kernel");
    c->category = "annotation";
    return true;
  }
  if (is_runtime_operation(s)) {
    set_unsupported(c, "runtime", "runtime_operation", "driver/runtime copy or fill, no kernel source");
    return true;
  }
  if (classify_rocm_library(n, s, c)) return true;
  if (starts_with(s, "Cijk_")) {
    set_unsupported(c, "tensile_gemm", "tensile_generated_kernel",
                    "generated by Tensile from rocBLAS/hipBLASLt logic files; no single source definition");
    return true;
  }
  if (is_trtllm_gen(s)) {
    set_unsupported(c, "trtllm_gen", "closed_source_library",
                    "TensorRT-LLM-gen kernel shipped as a prebuilt cubin (flashinfer / TensorRT-LLM load it at run time); "
                    "its generator is not public: closed source");
    return true;
  }
  std::string low = to_lower(s);
  if (contains(low, "cudnn") || (has_sm_prefix(s) && any_of(s, {"fprop", "dgrad", "wgrad"})) ||
      any_of(s, {"implicit_convolve_sgemm", "fft2d_r2c", "fft2d_c2r", "conv2d_grouped_direct", "nchwToNhwc",
                 "nhwcToNchw", "precomputed_convolve_sgemm", "scudnn", "cudnn::"})) {
    set_unsupported(c, "cudnn", "closed_source_library", "cuDNN kernel (closed source)");
    return true;
  }
  if (starts_with(s, "nvjet_")) {
    set_unsupported(c, "nvjet", "closed_source_library", "cuBLAS/cuBLASLt nvjet kernel (closed source)");
    return true;
  }
  if (starts_with(s, "cutlass_") || (starts_with(n.qualified_name, "cutlass::Kernel") && !n.template_args.empty() &&
                                     starts_with(n.template_args[0], "cutlass_"))) {
    set_unsupported(c, "cutlass", "closed_source_library", "CUTLASS instance compiled into cuBLAS (closed source)");
    return true;
  }
  bool gemv =
      starts_any(n.qualified_name, {"internal::gemvx::", "gemv2", "gemvx", "gemvNSP"}) || contains(s, "cublasGemv");
  if (has_sm_prefix(s) || starts_any(s, {"ampere_", "volta_", "turing_", "maxwell_", "hopper_", "gemv2", "gemvx",
                                         "gemmk1_kernel", "gemmSN_", "splitKreduce_kernel", "cublas", "void gemv2",
                                         "void gemmSN", "void splitKreduce", "void gemmk1", "void cublas"}) ||
      any_of(s, {"_cublas", "cublasLt", "cublas::"}) || gemv) {
    set_unsupported(c, "cublas", "closed_source_library",
                    gemv ? "cuBLAS GEMV kernel (closed source): a matrix-vector product, e.g. a linear layer with one "
                           "row (decode); to change it, batch rows into a GEMM or use a CUTLASS / Triton GEMV"
                         : "cuBLAS kernel (closed source)");
    return true;
  }
  return false;
}

/// PyTorch symmetric-memory collectives (torch/csrc/distributed/c10d/symm_mem/).
bool is_torch_symm_mem(const parsed_kernel_name& n) {
  const std::string& b = n.base_name;
  return starts_with(b, "multimem_") || ends_with(b, "_shot_all_reduce_kernel") || contains(n.qualified_name, "symm_mem::");
}

/// Open-source kinds looked up as C++ definitions (first match wins).
const char* cpp_kind(const parsed_kernel_name& n, const std::string& s) {
  const std::string& q = n.qualified_name;
  if (any_of(s, {"wvSplitK", "wvSpltK", "DeviceGemmWmma"})) return "hip_cpp";
  if (starts_with(n.original, "_ZN5aiter") || contains(s, "aiter::")) return "aiter";
  // A kernel outside composable_kernel instantiated with ck_tile types: aiter builds on ck_tile
  // (its paged attention takes ck_tile::ComposedAttention); vLLM's look-alikes do not.
  if (contains(s, "ck_tile::") && !starts_with(q, "ck_tile::") && !starts_with(q, "ck::") &&
      !starts_with(n.original, "_ZN7ck_tile") && !starts_with(n.original, "_ZN2ck"))
    return "aiter";
  if (starts_with(q, "tensorrt_llm::") || starts_with(q, "moe::dev::")) return "tensorrt_llm";
  if (starts_with(q, "flashinfer::")) return "flashinfer";
  if (starts_with(n.original, "_ZN7sgl_hip") ||
      any_of(s, {"sgl_hip::", "sgl_kernel::", "write_req_to_token_pool", "create_flashinfer_kv_indices",
                 "future_token_ids", "kn_get_mla_metadata", "clamp_position", "compute_position",
                 "set_mla_kv_buffer"}))
    return "sglang";
  if (starts_with(n.original, "_ZN7ck_tile") || contains(s, "ck_tile::")) return "ck_tile";
  if (starts_with(q, "ck::")) return "ck";
  if (any_of(s, {"flash_fwd", "flash_bwd", "flash::", "FlashAttn", "flash_attn", "pytorch_flash::"})) return "flash_attn";
  if (starts_with(q, "deep_gemm::")) return "deep_gemm";
  if (starts_with(q, "vllm::") || contains(s, "vllm::")) return "vllm";
  if (is_torch_symm_mem(n)) return "pytorch_symm_mem";
  if (starts_with(q, "at::") || starts_with(q, "void at::") || contains(s, "at::native::") || starts_with(q, "c10::") ||
      starts_with(q, "at_cuda_detail::"))
    return "aten_native";
  if (starts_with(n.base_name, "nccl")) return "nccl";
  if (starts_with(q, "cub::") || starts_with(q, "thrust::")) return "cub";
  if (starts_with(q, "rocprim::") || starts_with(q, "hipcub::")) return "rocprim";
  if (starts_with(q, "cutlass::") || starts_with(q, "cute::")) return "cutlass";
  return nullptr;
}

/// Kernels of AOTriton (github.com/ROCm/aotriton), the prebuilt Triton attention PyTorch on ROCm
/// runs for scaled_dot_product_attention: generic names other projects reuse.
bool is_aotriton_name(const std::string& s) {
  for (std::string_view k : {"attn_fwd", "attn_fwd_varlen", "bwd_kernel_dk_dv", "bwd_kernel_dq", "bwd_kernel_fuse",
                             "bwd_preprocess", "bwd_preprocess_varlen", "bwd_postprocess", "debug_fill_dropout_rng",
                             "debug_simulate_encoded_softmax"})
    if (s == k) return true;
  return false;
}

/// OpenAI's triton_kernels package (gpt-oss MoE: matmul_ogs, routing, top-k).
bool is_triton_kernels_name(const std::string& s) {
  return starts_any(s, {"_matmul_ogs", "_p_matmul_ogs", "_topk_forward", "_topk_backward", "_combined_routing",
                        "_sum_bitmatrix", "_compute_writeback_idx", "_finalize_matmul", "_routing_"});
}

const char* repo_hint_for(const std::string& kind) {
  if (kind == "aten_native") return "pass a pytorch checkout (github.com/pytorch/pytorch)";
  if (kind == "inductor")
    return "pass the inductor output dir (TORCHINDUCTOR_CACHE_DIR, default /tmp/torchinductor_<user>, or the "
           "TORCH_COMPILE_DEBUG=1 torch_compile_debug/ dir)";
  if (kind == "triton_jit" || kind == "unknown")
    return "pass the repository that defines the kernel (e.g. your project, triton, vllm, sglang)";
  if (kind == "flash_attn")
    return "pass flash-attention (github.com/Dao-AILab/flash-attention) or pytorch (bundles it under "
           "aten/src/ATen/native/transformers/cuda/flash_attn)";
  if (kind == "vllm") return "pass a vllm checkout (github.com/vllm-project/vllm)";
  if (kind == "sglang") return "pass an sglang checkout (github.com/sgl-project/sglang, sgl-kernel/)";
  if (kind == "nccl")
    return "pass an nccl checkout built once: its kernels are generated from the DEFINE_ncclDevKernel macro of "
           "src/device/common.h into build/obj/device/gensrc (github.com/NVIDIA/nccl)";
  if (kind == "aiter")
    return "pass an aiter checkout (github.com/ROCm/aiter: HIP/C++ kernels under csrc/, JIT-built at first use; "
           "Triton kernels under aiter/ops/triton)";
  if (kind == "ck")
    return "a composable_kernel device-op instance: pass composable_kernel (github.com/ROCm/composable_kernel, "
           "include/ck/tensor_operation/gpu) to find the template; it was compiled into the library that launched it "
           "(MIOpen's convolution solvers for kernel_grouped_conv_* / *_bwd_weight: tune MIOpen; hipBLASLt, aiter or "
           "PyTorch's ROCm backend otherwise), so change it there";
  if (kind == "ck_tile")
    return "a ck_tile kernel (composable_kernel's include/ck_tile; kentry runs the kernel class in its template "
           "arguments): pass composable_kernel (github.com/ROCm/composable_kernel) and the project that instantiates "
           "it (aiter, PyTorch's ROCm attention, your code)";
  if (kind == "hip_cpp") return "pass a vllm checkout (csrc/rocm) or the project defining the HIP kernel";
  if (kind == "cutlass")
    return "a CUTLASS/CuTe kernel template: the op is the type in its template arguments; pass the project that "
           "instantiates it (e.g. vllm csrc/, flashinfer) and cutlass (github.com/NVIDIA/cutlass) for the template";
  if (kind == "tensorrt_llm")
    return "pass TensorRT-LLM (github.com/NVIDIA/TensorRT-LLM, cpp/tensorrt_llm/kernels) or flashinfer "
           "(github.com/flashinfer-ai/flashinfer), which vendors these kernels under csrc/nv_internal and "
           "csrc/fused_moe/trtllm_backend";
  if (kind == "flashinfer") return "pass flashinfer (github.com/flashinfer-ai/flashinfer: include/flashinfer, csrc)";
  if (kind == "deep_gemm")
    return "pass DeepGEMM (github.com/deepseek-ai/DeepGEMM); its kernels are JIT-compiled from deep_gemm/include";
  if (kind == "pytorch_symm_mem")
    return "pass a pytorch checkout (symmetric-memory collectives: torch/csrc/distributed/c10d/, "
           "CUDASymmetricMemoryOps.cu)";
  if (kind == "cub")
    return "CUB/Thrust ship with the CUDA toolkit: pass cccl (github.com/NVIDIA/cccl); the op that launched it is "
           "usually in ATen";
  if (kind == "rocprim") return "rocPRIM ships with ROCm: pass rocPRIM (github.com/ROCm/rocPRIM)";
  return "pass the repository that defines the kernel";
}

/// Kind refinements, hints and notes that depend on the library (after the kind is set).
void add_library_facts(const parsed_kernel_name& n, const std::string& s, kernel_class* c) {
  if (c->mode == lookup_mode::any && is_aotriton_name(c->symbol)) {
    c->kind = "triton_jit";
    c->shared_with = "aotriton";
    c->notes.emplace_back("also the name of an AOTriton kernel, which PyTorch on ROCm runs for "
                          "scaled_dot_product_attention (launched under aten::_flash_attention_forward / _efficient_"
                          "attention): then its source is github.com/ROCm/aotriton (tritonsrc/); a match elsewhere by "
                          "this name alone is only a candidate");
    c->repo_hint = "pass the repository that defines the kernel: AOTriton (github.com/ROCm/aotriton) when "
                   "PyTorch's SDPA launched it, else your project (aiter, vllm, ...)";
  }
  if (c->mode == lookup_mode::any && is_triton_kernels_name(c->symbol)) {
    c->kind = "triton_jit";
    c->mode = lookup_mode::python;
    c->shared_with = "triton_kernels";
    c->repo_hint = "looks like a triton_kernels kernel (gpt-oss MoE): pass triton's python/triton_kernels "
                   "(github.com/triton-lang/triton) or the vllm/sglang tree that vendors it";
    c->notes.emplace_back("a triton_kernels (gpt-oss MoE) kernel name: copies outside a triton_kernels folder "
                          "(aiter's moe_routing) match only as candidates");
  }
  if (c->kind == "tensorrt_llm" && contains(s, "flashinfer::"))
    c->notes.emplace_back("flashinfer's vendored copy of a TensorRT-LLM kernel (its signature names flashinfer types)");
  if (c->kind == "nccl") c->notes.emplace_back("NCCL kernel generated at build time from a macro");
  if (c->kind == "aiter" && !starts_with(n.original, "_ZN5aiter") && !contains(s, "aiter::"))
    c->notes.emplace_back("a kernel outside composable_kernel instantiated with ck_tile types: aiter's (or another "
                          "project building on ck_tile), not vLLM's look-alike");
  if (n.name_only)
    c->notes.emplace_back("the demangler could not decode this name (a newer mangling); qualified name read from its "
                          "prefix, template arguments and parameters unknown");
}

}  // namespace

bool is_runtime_operation(std::string_view name) {
  std::string s(trim(name));
  return starts_any(s, {"Memcpy ", "Memset ", "cudaMemcpy", "cudaMemset", "hipMemcpy", "hipMemset", "__amd_rocclr_",
                        "MEMORY_COPY_", "Memcpy", "Memset"});
}

std::string categorize(const std::string& text) {
  for (const auto& rule : k_categories) {
    if (any_of(text, rule.keywords)) return rule.category;
  }
  return "unknown";
}

std::string error_prefix(const std::string& kind) {
  if (kind == "triton_jit") return "triton";
  if (kind == "unknown" || kind.empty()) return "";
  return kind;
}

kernel_class classify_kernel(const parsed_kernel_name& n) {
  kernel_class c;
  const std::string& s = n.demangled;
  // Categories look at the name and template arguments, not the parameter list.
  c.category = categorize(n.is_cpp_signature ? n.normalized : s);
  // A name still mangled says nothing in its letters ("DF16b" is not an fp16 tag).
  bool mangled = starts_with(s, "_Z") || starts_with(s, "__Z");
  std::string lname = mangled     ? (n.name_only ? to_lower(n.base_name) : std::string())
                      : to_lower(n.base_name.empty() ? s : n.base_name);
  if (classify_unsupported(n, s, &c)) {
    add_dtype_notes(n, mangled ? lname : to_lower(s), &c.notes);
    add_shape_notes(s, &c.notes);
    if (c.kind == "cublas" || c.kind == "nvjet" || c.kind == "cutlass") c.category = c.category == "unknown" ? "gemm" : c.category;
    return c;
  }
  c.symbol = n.base_name;
  c.scopes = n.scopes;
  c.param_count = n.param_count;
  if (c.symbol.empty()) {
    c.kind = "unknown";
    c.mode = lookup_mode::none;
    c.unsupported_error = "name_not_parseable";
    c.notes.emplace_back("no function name could be extracted");
    return c;
  }
  bool inductor = !n.is_cpp_signature &&
                  ((starts_with(c.symbol, "triton_") && contains(c.symbol, "_fused_")) ||
                   starts_any(c.symbol, {"triton_poi_", "triton_red_", "triton_per_", "triton_tem_", "triton_for_"}));
  if (inductor) {
    c.kind = "inductor";
    c.mode = lookup_mode::python;
    c.notes.emplace_back("torch.compile generated");
  } else if (const char* k = cpp_kind(n, s)) {
    c.kind = k;
    c.mode = lookup_mode::cpp;
  } else if (!n.is_cpp_signature && is_identifier(s)) {
    c.kind = "unknown";  // plain identifier: a Triton kernel or an extern "C" CUDA kernel
    c.mode = lookup_mode::any;
  } else {
    c.kind = "cuda_cpp";
    c.mode = lookup_mode::cpp;
  }
  c.repo_hint = repo_hint_for(c.kind);
  c.return_type = n.return_type;
  add_library_facts(n, s, &c);
  if (!n.scopes.empty()) c.notes.push_back("namespace: " + join(n.scopes, "::"));
  for (const auto& f : n.functors) c.notes.push_back("functor: " + f);
  add_dtype_notes(n, lname, &c.notes);
  return c;
}

}  // namespace magpie::source
