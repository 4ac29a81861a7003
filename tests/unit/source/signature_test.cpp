#include "source/signature.h"

#include <gtest/gtest.h>

#include "source/kernel_name.h"

namespace magpie::source {
namespace {

TEST(Signature, TraceTemplateArgumentsAreTypesOrValues) {
  EXPECT_EQ(trace_template_shape({"0", "__hip_bfloat16", "(vllm::Fp8KVCacheDataType)0", "true", "-2", "2048l",
                                  "&silu<float>", "ck_tile::ComposedAttention<0u, false>"}),
            "VTVVVVVT");
}

TEST(Signature, TraceParametersByKind) {
  EXPECT_EQ(trace_param_shape({"c10::BFloat16 const*", "long", "unsigned int", "float", "double", "bool",
                               "at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned "
                               "int, float, 4, 4>",
                               "void (*)(int)", "std::array<char*, 2ul>", "float const (&) [4]"}),
            "piiffb?p?r");
}

TEST(Signature, DeclaredTemplateParameters) {
  EXPECT_EQ(decl_template_shape("typename scalar_t, typename cache_t, bool IS_NEOX"), "TTV");
  // An enum-typed (or concept-constrained) parameter and a function pointer are '?'.
  EXPECT_EQ(decl_template_shape("int VERSION_ID, typename scalar_t, vllm::Fp8KVCacheDataType KV_DTYPE, "
                                "typename AttentionVariant, T (*ACT_FN)(const T&), std::integral I, size_t N"),
            "VT?T??V");
  // A `typename A::type` parameter is a value whose type is dependent; packs are '.'.
  EXPECT_EQ(decl_template_shape("typename T, typename std::enable_if<(W > 0), int>::type = 0, class = void"), "TVT");
  EXPECT_EQ(decl_template_shape("template <typename> class Op, typename... Ts"), "T.");
  EXPECT_EQ(decl_template_shape(""), "");
}

TEST(Signature, DeclaredParametersByKind) {
  EXPECT_EQ(decl_param_shape({"const int64_t* __restrict__ positions", "scalar_t* __restrict__ query", "const int rot_dim",
                              "const int64_t query_stride", "const bool inverse", "float eps", "T value", "int",
                              "unsigned long long n", "const float* __restrict__ w = nullptr", "Args... args",
                              "const __grid_constant__ Params p", "size_t n", "long double x"}),
            "ppiibf?iip.?if");
  EXPECT_EQ(decl_param_shape({"void"}), "");
}

TEST(Signature, FitOfOnePart) {
  EXPECT_EQ(compare_shape("TV", "TV"), signature_fit::exact);
  EXPECT_EQ(compare_shape("pi", "p?"), signature_fit::exact);  // '?' (a template type) matches anything
  EXPECT_EQ(compare_shape("TV", "TTV"), signature_fit::extends);  // vLLM's rotary gained cache_t
  EXPECT_EQ(compare_shape("ppppiiiiiii", "ppppiiiiiiiib"), signature_fit::extends);
  EXPECT_EQ(compare_shape("TTVVVVV", "TTVVVV"), signature_fit::differs);  // aiter's reduce vs vLLM's
  EXPECT_EQ(compare_shape("VTTVVVVVVVT", "TTVTVVVVVV"), signature_fit::differs);
  EXPECT_EQ(compare_shape("fi", "if"), signature_fit::differs);
  EXPECT_EQ(compare_shape("pp", "pip"), signature_fit::extends);
  EXPECT_EQ(compare_shape("ipp", "i."), signature_fit::exact);  // a pack takes the rest
  EXPECT_EQ(compare_shape("", "i."), signature_fit::differs);
}

TEST(Signature, CombinedFit) {
  EXPECT_EQ(combine_fits(signature_fit::exact, signature_fit::extends), signature_fit::extends);
  EXPECT_EQ(combine_fits(signature_fit::extends, signature_fit::differs), signature_fit::differs);
  EXPECT_EQ(combine_fits(signature_fit::unknown, signature_fit::exact), signature_fit::exact);
  EXPECT_EQ(combine_fits(signature_fit::unknown, signature_fit::unknown), signature_fit::unknown);
  EXPECT_STREQ(signature_fit_name(signature_fit::extends), "extends");
}

TEST(Signature, ParsedTraceNameFeedsTheShapes) {
  auto n = parse_kernel_name(
      "void paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, __hip_bfloat16, 128, 128, 256, 3, false>("
      "__hip_bfloat16*, float const*, float const*, __hip_bfloat16 const*, int const*, int const*, int, int, "
      "float const*)");
  EXPECT_EQ(trace_template_shape(n.template_args), "TTVVVVV");
  EXPECT_EQ(trace_param_shape(n.params), "ppppppiip");
}

}  // namespace
}  // namespace magpie::source
