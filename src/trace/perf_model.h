// Analytical FLOP / byte models of PyTorch ops from their recorded shapes (record_shapes), with
// TraceLens's formulas (research tracelens.md §3) and categories. Deliberate fixes of TraceLens
// quirks (§8.2), documented in docs/trace-analysis.md:
//   * conv bias is detected from a non-empty bias tensor (TraceLens: never);
//   * reduce output elements come from the dim / keepdim Concrete Inputs (TraceLens: always 1);
//   * BatchNorm training / affine flags parse the strings ('False' is false);
//   * SDPA bytes use the dtype's size (TraceLens: always 2 bytes per element);
//   * causal SDPA with N_Q != N_KV counts the top-left causal mask exactly (TraceLens: error);
//   * float8_e5m2 maps to fp8 (TraceLens: no compute spec → no roofline);
//   * Inductor Triton kernels (triton_poi/red/per_*) are categorised by kind (elementwise /
//     reduce; TraceLens: "triton") and get vector_<precision> specs (TraceLens spells the dtype
//     out, e.g. vector_bfloat16, which matches no ceiling); "float" tensors count 4 bytes;
//   * the upsample family beyond nearest (linear, bilinear, bicubic, trilinear) is modelled
//     with 2 FLOPs per interpolation tap.
// Data moved is reported in bytes; the Magpie-compatible CSV converts with TraceLens's MiB rule.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "trace/annotations.h"

namespace magpie::trace {

/// The recorded arguments of one cpu_op (raw JSON texts as captured by the reader).
struct op_args {
  std::string name;
  std::string_view dims, types, concrete, strides;
};

struct perf_result {
  bool has_model = false;   ///< the op name has a model (even if this instance failed)
  bool computed = false;    ///< flops known
  std::string category;     ///< TraceLens op category: GEMM, SDPA_fwd, CONV_fwd, elementwise, reduce,
                            ///< NORM_fwd, RMSNorm, InferenceAttention ("" when no model)
  double flops = 0;
  std::optional<double> bytes;  ///< nullopt when a dtype size is unknown
  std::string compute_spec;     ///< "matrix_bf16", "vector_fp32", "" (unknown precision)
  json params = json::object(); ///< model parameters, in the model's key order
  std::string note;             ///< why the model could not be applied
};

/// Bytes per element of a trace dtype string (TraceLens name2bpe), nullopt if unknown.
std::optional<double> dtype_bytes(std::string_view dtype);
/// Precision tag for the compute spec (fp32, fp16, bf16, fp8, fp4, fp64) or "".
std::string dtype_precision(std::string_view dtype);

bool has_perf_model(std::string_view op_name);
/// TraceLens's categorize_torch_op: the model category, else "triton" / "record_param_comms"
/// by name, else elementwise / reduce / multi_tensor_apply from the first kernel name, else "other".
std::string op_category(std::string_view op_name, std::string_view first_kernel_name);
/// Query / key shape of an attention op (the SDPA / flash-attention layouts of the model table,
/// plus aten::scaled_dot_product_attention): batch, query tokens per sequence, key tokens.
struct attention_dims {
  int64_t batch = 0, n_q = 0, n_kv = 0;
};
std::optional<attention_dims> attention_dims_of(std::string_view op_name, std::string_view input_dims);

/// Applies the model of `a.name`. `ann` (the enclosing step annotation) feeds the paged
/// inference-attention model; without a detailed one that model returns computed == false.
perf_result model_op(const op_args& a, const step_annotation* ann = nullptr);

}  // namespace magpie::trace
