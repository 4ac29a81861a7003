#include "trace/perf_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

#include "core/strings.h"
#include "trace/util.h"

namespace magpie::trace {
namespace {

using shape = std::vector<int64_t>;

struct parsed_args {
  std::vector<std::optional<shape>> dims;  ///< nullopt: not a flat integer list (TensorList, scalar…)
  std::vector<std::string> types, concrete, strides;
  const shape* dim(size_t i) const { return i < dims.size() && dims[i] ? &*dims[i] : nullptr; }
  bool tensor(size_t i) const { return dim(i) && !dim(i)->empty(); }
  std::string type(size_t i) const { return i < types.size() ? types[i] : std::string(); }
  std::string conc(size_t i) const { return i < concrete.size() ? concrete[i] : std::string(); }
  std::string stride(size_t i) const { return i < strides.size() ? strides[i] : std::string(); }
};

parsed_args parse(const op_args& a) {
  parsed_args p;
  for (auto e : json_array_elements(a.dims)) p.dims.push_back(json_int_list(e));
  for (auto e : json_array_elements(a.types)) p.types.push_back(json_string_value(e).value_or(""));
  for (auto e : json_array_elements(a.concrete)) p.concrete.push_back(json_string_value(e).value_or(""));
  for (auto e : json_array_elements(a.strides)) p.strides.push_back(python_repr_json(e));
  return p;
}

double prod(const shape& s) {
  double v = 1;
  for (int64_t d : s) v *= static_cast<double>(d);
  return v;
}

std::string tuple_repr(const std::vector<std::string>& items) {
  std::string s = "(";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) s += ", ";
    s += "'" + items[i] + "'";
  }
  if (items.size() == 1) s += ",";
  return s + ")";
}

std::string shape_repr(const shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  if (s.size() == 1) out += ",";
  return out + ")";
}

std::optional<double> bytes_of(std::initializer_list<std::pair<double, std::string>> parts) {
  double b = 0;
  for (const auto& [n, t] : parts) {
    auto bpe = dtype_bytes(t);
    if (!bpe) return std::nullopt;
    b += n * *bpe;
  }
  return b;
}

void set_spec(perf_result& r, const char* maf, const std::string& dtype) {
  std::string p = dtype_precision(dtype);
  r.compute_spec = p.empty() ? std::string() : std::string(maf) + "_" + p;
}

// ---------------------------------------------------------------- GEMM

perf_result gemm(const op_args& a, const parsed_args& p) {
  perf_result r;
  r.category = "GEMM";
  size_t ia = 0, ib = 1;
  bool bias = false, batched = false;
  std::string n = a.name;
  if (n == "aten::addmm") ia = 1, ib = 2, bias = true;
  else if (n == "aten::bmm") batched = true;
  else if (n == "aten::baddbmm") ia = 1, ib = 2, bias = true, batched = true;
  else if (n == "aten::_scaled_mm") bias = p.tensor(2) && p.dims.size() == 3;
  const shape* A = p.dim(ia);
  const shape* B = p.dim(ib);
  size_t rank = batched ? 3 : 2;
  if (!A || !B || A->size() != rank || B->size() != rank) {
    r.note = "unexpected GEMM input shapes";
    return r;
  }
  double Bt = batched ? static_cast<double>((*A)[0]) : 1;
  double M = static_cast<double>((*A)[rank - 2]), K = static_cast<double>((*A)[rank - 1]);
  double N = static_cast<double>((*B)[rank - 1]);
  std::string ta = p.type(ia), tb = p.type(ib);
  std::string tout = ta;
  if (n == "aten::_scaled_mm" && dtype_bytes(ta).value_or(0) == 1) tout = "c10::BFloat16";  // fp8 in, 16-bit out
  r.flops = Bt * (2 * M * N * K + (bias ? M * N : 0));
  auto b = bytes_of({{M * K, ta}, {K * N, tb}, {M * N, tout}});
  if (b && bias) b = *b + N * dtype_bytes(ta).value_or(0);
  if (b) r.bytes = Bt * *b;
  r.computed = true;
  set_spec(r, "matrix", ta);
  if (batched) r.params["B"] = static_cast<int64_t>(Bt);
  r.params["M"] = static_cast<int64_t>(M);
  r.params["N"] = static_cast<int64_t>(N);
  r.params["K"] = static_cast<int64_t>(K);
  r.params["bias"] = bias;
  r.params["stride_A"] = p.stride(ia);
  r.params["stride_B"] = p.stride(ib);
  r.params["dtype_A_B"] = tuple_repr({ta, tb});
  if (!batched) r.params["B"] = 1;
  return r;
}

// ---------------------------------------------------------------- SDPA

struct sdpa_layout {
  int q, k, v;
  bool bnhd;  ///< (B, N, H, d) instead of (B, H, N, d)
  int dropout, causal;
  bool flash;
};

const std::map<std::string, sdpa_layout, std::less<>>& sdpa_table() {
  static const std::map<std::string, sdpa_layout, std::less<>> t = {
      {"aten::_scaled_dot_product_flash_attention", {0, 1, 2, false, 3, 4, true}},
      {"aten::_scaled_dot_product_efficient_attention", {0, 1, 2, false, 5, 6, false}},
      {"aten::_scaled_dot_product_cudnn_attention", {0, 1, 2, false, 5, 6, false}},
      {"aten::_scaled_dot_product_flash_attention_for_cpu", {0, 1, 2, false, 3, 4, true}},
      {"FlashAttnFunc", {0, 1, 2, true, 3, 5, true}},
      {"flash_attn::_flash_attn_forward", {0, 1, 2, true, 3, 5, true}},
      {"aiter::_flash_attn_forward", {0, 1, 2, true, 3, 5, true}},
      {"aiter::mha_fwd", {0, 1, 2, true, 3, 5, true}},
      {"aiter::fmha_v3_fwd", {0, 1, 2, true, 3, 5, true}},
      {"aiter::wrapper_fmha_v3_fwd", {1, 2, 3, true, 4, 6, true}},
  };
  return t;
}

bool truthy(const std::string& s) { return s == "True" || s == "true" || s == "1"; }

/// Valid (q, k) pairs of a top-left causal mask (torch's is_causal) — equals N²/2 rounded as
/// TraceLens when N_Q == N_KV (we keep its N_Q·N_KV/2 there for compatibility).
double causal_pairs(double nq, double nkv) {
  if (nq == nkv) return nq * nkv / 2;
  double full = std::min(nq, nkv);  // rows 0..min-1 see q+1 keys, the rest see all nkv keys
  return full * (full + 1) / 2 + (nq - full) * nkv;
}

perf_result sdpa(const parsed_args& p, const sdpa_layout& L) {
  perf_result r;
  r.category = "SDPA_fwd";
  const shape *Q = p.dim(L.q), *K = p.dim(L.k), *V = p.dim(L.v);
  if (!Q || !K || !V || Q->size() != 4 || K->size() != 4 || V->size() != 4) {
    r.note = "unexpected SDPA input shapes";
    return r;
  }
  auto get = [&](const shape& s, bool n) { return static_cast<double>(L.bnhd ? s[n ? 1 : 2] : s[n ? 2 : 1]); };
  double B = static_cast<double>((*Q)[0]);
  double NQ = get(*Q, true), HQ = get(*Q, false), NKV = get(*K, true), HKV = get(*K, false);
  double dqk = static_cast<double>((*Q)[3]), dv = static_cast<double>((*V)[3]);
  bool causal = truthy(p.conc(static_cast<size_t>(L.causal)));
  std::string dropout = p.conc(static_cast<size_t>(L.dropout));
  double pairs = causal ? causal_pairs(NQ, NKV) : NQ * NKV;
  r.flops = B * HQ * (2 * pairs * dqk + 2 * pairs * dv);
  std::string t = p.type(L.q);
  auto bpe = dtype_bytes(t);
  if (bpe) r.bytes = *bpe * B * (NQ * HQ * dqk + NKV * HKV * dqk + NKV * HKV * dv + NQ * HQ * dv);
  r.computed = true;
  set_spec(r, "matrix", t);
  r.params["B"] = static_cast<int64_t>(B);
  r.params["N_Q"] = static_cast<int64_t>(NQ);
  r.params["H_Q"] = static_cast<int64_t>(HQ);
  r.params["N_KV"] = static_cast<int64_t>(NKV);
  r.params["H_KV"] = static_cast<int64_t>(HKV);
  r.params["d_h_qk"] = static_cast<int64_t>(dqk);
  r.params["d_h_v"] = static_cast<int64_t>(dv);
  r.params["dropout"] = dropout.empty() ? "0.0" : dropout;
  r.params["causal"] = causal;
  r.params["flash_impl"] = L.flash;
  r.params["dtype_A_B"] = tuple_repr({t, p.type(L.k)});
  return r;
}

// ---------------------------------------------------------------- convolution

std::vector<int64_t> int_list_arg(const std::string& s, size_t n, int64_t dflt) {
  std::vector<int64_t> v;
  auto parsed = json_int_list(s);
  if (parsed) v = *parsed;
  else if (auto one = parse_int(trim(s))) v = {*one};
  if (v.empty()) v = {dflt};
  if (v.size() == 1) v.resize(n, v[0]);
  v.resize(n, dflt);
  return v;
}

perf_result conv(const op_args& a, const parsed_args& p) {
  (void)a;
  perf_result r;
  r.category = "CONV_fwd";
  const shape *X = p.dim(0), *W = p.dim(1);
  if (!X || !W || X->size() < 3 || W->size() != X->size()) {
    r.note = "unexpected convolution input shapes";
    return r;
  }
  size_t nd = X->size() - 2;
  auto stride = int_list_arg(p.conc(3), nd, 1), pad = int_list_arg(p.conc(4), nd, 0),
       dil = int_list_arg(p.conc(5), nd, 1), outpad = int_list_arg(p.conc(7), nd, 0);
  bool transposed = truthy(p.conc(6));
  bool bias = p.tensor(2);  // deliberate fix: TraceLens tests len(Input Dims) == 3
  shape out = {(*X)[0], transposed ? (*W)[1] : (*W)[0]};
  for (size_t i = 0; i < nd; ++i) {
    int64_t in = (*X)[2 + i], k = (*W)[2 + i];
    int64_t o = transposed ? (in - 1) * stride[i] - 2 * pad[i] + dil[i] * (k - 1) + outpad[i] + 1
                           : (in + 2 * pad[i] - dil[i] * (k - 1) - 1) / stride[i] + 1;
    out.push_back(o);
  }
  shape wtail(W->begin() + 1, W->end());
  r.flops = 2 * prod(wtail) * prod(transposed ? *X : out) + (bias ? prod(out) : 0);
  std::string t = p.type(0);
  auto bpe = dtype_bytes(t);
  if (bpe) r.bytes = *bpe * (prod(*X) + prod(*W) + prod(out) + (bias ? static_cast<double>((*W)[0]) : 0));
  r.computed = true;
  set_spec(r, "matrix", t);
  r.params["convNd"] = static_cast<int64_t>(nd);
  r.params["input_shape"] = shape_repr(*X);
  r.params["filter_shape"] = shape_repr(*W);
  r.params["dtype_input_weight"] = tuple_repr({t, p.type(1)});
  r.params["bias"] = bias;
  r.params["stride"] = shape_repr(stride);
  r.params["padding"] = shape_repr(pad);
  r.params["dilation"] = shape_repr(dil);
  r.params["transposed_conv"] = transposed;
  r.params["output_padding"] = shape_repr(outpad);
  r.params["groups"] = p.conc(8).empty() ? "1" : p.conc(8);
  return r;
}

}  // namespace
}  // namespace magpie::trace

#include "trace/perf_model_vector.inc"
