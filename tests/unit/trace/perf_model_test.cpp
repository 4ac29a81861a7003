#include "trace/perf_model.h"

#include <gtest/gtest.h>

#include "trace/annotations.h"

namespace magpie::trace {
namespace {

perf_result run(const std::string& name, const std::string& dims, const std::string& types,
                const std::string& concrete = "[]", const step_annotation* ann = nullptr) {
  op_args a{name, dims, types, concrete, ""};
  return model_op(a, ann);
}

TEST(PerfModel, GemmFamily) {
  auto mm = run("aten::mm", "[[96, 1024], [1024, 2816]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]");
  ASSERT_TRUE(mm.computed);
  EXPECT_EQ(mm.category, "GEMM");
  EXPECT_DOUBLE_EQ(mm.flops, 2.0 * 96 * 2816 * 1024);
  EXPECT_DOUBLE_EQ(*mm.bytes, (96.0 * 1024 + 1024.0 * 2816 + 96.0 * 2816) * 2);
  EXPECT_EQ(mm.compute_spec, "matrix_bf16");
  auto bmm = run("aten::bmm", "[[4, 8, 16], [4, 16, 32]]", "[\"float\", \"float\"]");
  EXPECT_DOUBLE_EQ(bmm.flops, 4 * 2.0 * 8 * 32 * 16);
  EXPECT_EQ(bmm.compute_spec, "matrix_fp32");
  auto bad = run("aten::mm", "[[3], [3, 4]]", "[\"float\", \"float\"]");
  EXPECT_TRUE(bad.has_model);
  EXPECT_FALSE(bad.computed);
  EXPECT_FALSE(run("aten::linear", "[[2, 3]]", "[]").has_model);
}

TEST(PerfModel, SdpaCausalGqaAndDtypeBytes) {
  // The real trace's cuDNN SDPA: q (2,16,48,64), k/v (2,4,48,64), is_causal (Concrete[6]) True.
  auto r = run("aten::_scaled_dot_product_cudnn_attention", "[[2, 16, 48, 64], [2, 4, 48, 64], [2, 4, 48, 64], [], [], [], [], [], []]",
               "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\"]",
               "[\"\", \"\", \"\", \"\", \"False\", \"0.\", \"True\", \"False\", \"0.125\"]");
  ASSERT_TRUE(r.computed);
  EXPECT_EQ(r.category, "SDPA_fwd");
  EXPECT_DOUBLE_EQ(r.flops, 2 * 16 * (2.0 * 48 * 48 * 64 + 2.0 * 48 * 48 * 64) / 2);
  EXPECT_DOUBLE_EQ(*r.bytes, 2.0 * 2 * (48 * 16 * 64 + 48 * 4 * 64 + 48 * 4 * 64 + 48 * 16 * 64));
  EXPECT_EQ(r.params["H_KV"], 4);
  auto f32 = run("aten::_scaled_dot_product_flash_attention", "[[1, 2, 8, 16], [1, 2, 8, 16], [1, 2, 8, 16]]",
                 "[\"float\", \"float\", \"float\"]", "[\"\", \"\", \"\", \"0.0\", \"False\"]");
  EXPECT_DOUBLE_EQ(*f32.bytes, 4.0 * (8 * 2 * 16) * 4);  // fix: 4 bytes per fp32 element, not 2
  // Decode-shaped causal (N_Q = 1 < N_KV = 10): the top-left mask leaves one key.
  auto dec = run("aten::_scaled_dot_product_flash_attention", "[[1, 1, 1, 8], [1, 1, 10, 8], [1, 1, 10, 8]]",
                 "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]", "[\"\", \"\", \"\", \"0.0\", \"True\"]");
  EXPECT_DOUBLE_EQ(dec.flops, 1 * 1 * (2.0 * 1 * 8 + 2.0 * 1 * 8));
}

TEST(PerfModel, ConvolutionWithBias) {
  auto r = run("aten::convolution", "[[1, 3, 32, 32], [8, 3, 3, 3], [8], [], [], [], [], [], []]",
               "[\"float\", \"float\", \"float\"]",
               "[\"\", \"\", \"\", \"[1, 1]\", \"[1, 1]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\"]");
  ASSERT_TRUE(r.computed);
  double out = 1.0 * 8 * 32 * 32;
  EXPECT_DOUBLE_EQ(r.flops, 2.0 * (3 * 3 * 3) * out + out);  // bias detected (TraceLens: never)
  EXPECT_DOUBLE_EQ(*r.bytes, 4.0 * (3 * 32 * 32 + 8 * 27 + out + 8));
}

TEST(PerfModel, ElementwiseReduceNorms) {
  auto add = run("aten::add", "[[2, 48, 1024], [1024], []]", "[\"float\", \"float\", \"Scalar\"]");
  EXPECT_DOUBLE_EQ(add.flops, 2.0 * 48 * 1024);
  EXPECT_DOUBLE_EQ(*add.bytes, 4.0 * (98304 + 1024 + 98304));
  auto scal = run("aten::mul", "[[1, 48, 64], []]", "[\"float\", \"double\"]");
  EXPECT_DOUBLE_EQ(*scal.bytes, 4.0 * 3072 + 8 + 4.0 * 3072);
  auto silu = run("aten::silu", "[[2, 48, 2816]]", "[\"c10::BFloat16\"]");
  EXPECT_DOUBLE_EQ(*silu.bytes, 2.0 * 2 * 48 * 2816 * 2);
  EXPECT_EQ(silu.compute_spec, "vector_bf16");
  auto mean = run("aten::mean", "[[2, 48, 1024], [], [], []]", "[\"float\", \"ScalarList\", \"Scalar\", \"\"]",
                  "[\"\", \"[-1]\", \"True\", \"\"]");
  EXPECT_EQ(mean.params["num_output_elems"], 96);  // fix: from dim=[-1] (TraceLens: 1)
  auto all = run("aten::sum", "[[4, 4]]", "[\"float\"]", "[\"\"]");
  EXPECT_EQ(all.params["num_output_elems"], 1);
  auto rms = run("aten::rms_norm", "[[8, 64], [], [64], []]", "[\"c10::BFloat16\", \"\", \"c10::BFloat16\", \"\"]");
  EXPECT_DOUBLE_EQ(rms.flops, 8.0 * (2 * 64 + 2) + 512.0 * 2);
  EXPECT_DOUBLE_EQ(*rms.bytes, 2.0 * (512 * 2 + 64));
  auto bn = run("aten::batch_norm", "[[4, 3, 8, 8], [3], [3], [3], [3]]", "[\"float\", \"float\", \"float\", \"float\", \"float\"]",
                "[\"\", \"\", \"\", \"\", \"\", \"False\", \"0.1\", \"1e-05\", \"True\"]");
  EXPECT_EQ(bn.params["is_training"], false);  // fix: 'False' parsed
  EXPECT_EQ(dtype_precision("c10::Float8_e5m2"), "fp8");
  EXPECT_FALSE(dtype_bytes("c10::complex<float>").has_value());
}

TEST(PerfModel, PagedInferenceAttentionNeedsDetailedAnnotation) {
  auto ann = parse_step_annotation("execute_6147_context_2(sq6144sk7144sqsq20971520sqsk23019520)_generation_3(sq3sk6144sqsq3sqsk6144)");
  ASSERT_TRUE(ann.has_value());
  EXPECT_TRUE(ann->detailed);
  EXPECT_EQ(ann->phase(), step_phase::prefilldecode);
  EXPECT_EQ(ann->batch_size, 6147);
  std::string dims = "[[6147, 64, 64], [4000, 16, 8, 64]]";
  std::string types = "[\"c10::BFloat16\", \"c10::BFloat16\"]";
  auto r = run("vllm::unified_attention_with_output", dims, types, "[]", &*ann);
  ASSERT_TRUE(r.computed);
  double HQ = 64, d = 64;
  double flops = HQ * (2.0 * 23019520 * d - 20971520.0 * d + 2.0 * 23019520 * d - 20971520.0 * d) + HQ * (4.0 * 6144 * d);
  EXPECT_DOUBLE_EQ(r.flops, flops);
  auto native = parse_step_annotation("execute_context_2(96)_generation_0(0)");
  ASSERT_TRUE(native.has_value());
  EXPECT_FALSE(native->detailed);
  EXPECT_FALSE(run("vllm::unified_attention_with_output", dims, types, "[]", &*native).computed);
  auto sg = parse_step_annotation("step[DECODE bs=64]");
  ASSERT_TRUE(sg.has_value());
  EXPECT_EQ(sg->phase(), step_phase::decode_only);
  EXPECT_EQ(sg->batch_size, 64);
  auto sgm = parse_step_annotation("step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]");
  ASSERT_TRUE(sgm && sgm->detailed);
  EXPECT_EQ(sgm->phase(), step_phase::prefilldecode);
  auto atom = parse_step_annotation("prefill[bs=2 tok=14721 ctx=[1,2]]");
  ASSERT_TRUE(atom.has_value());
  EXPECT_EQ(atom->phase(), step_phase::prefill_only);
  EXPECT_EQ(atom->batch_size, 14721);
  EXPECT_FALSE(parse_step_annotation("ProfilerStep#3").has_value());
}

}  // namespace
}  // namespace magpie::trace
