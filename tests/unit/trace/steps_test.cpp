// Step inference without annotations, TraceLens's per-op-name view, the newly modelled ops.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

#include "core/fs.h"
#include "core/strings.h"
#include "trace/analysis.h"
#include "trace/perf_model.h"
#include "trace/stages.h"

namespace magpie::trace {
namespace {

/// A generate-style trace: B sequences, a prompt of P tokens, then `decodes` forwards of one
/// token each. Every forward is a flat run of root ops on one thread (as HF generate without
/// with_stack): aten::empty (also between layers, the op a naive split cuts at),
/// aten::embedding, per layer aten::linear → aten::mm and optionally SDPA, each launching one
/// kernel.
class trace_builder {
 public:
  /// profiler_steps: each forward inside a ProfilerStep#N user_annotation (N from 2, as under a
  /// schedule with wait 1 and warm-up 1), then one more ProfilerStep holding CPU work only.
  std::string generate(int64_t B, int64_t P, int decodes, bool attention, bool gemm_shapes = true,
                       bool profiler_steps = false) {
    int64_t t = 1000;
    op("aten::empty", t, 2, "");  // setup before the first forward: no GEMM
    t += 10;
    for (int f = 0; f <= decodes; ++f) {
      int64_t t0 = t;
      int64_t tokens = f == 0 ? B * P : B, nq = f == 0 ? P : 1, nkv = P + f;
      op("aten::embedding", t, 5, "");
      t += 10;
      for (int layer = 0; layer < 2; ++layer) {
        op("aten::empty", t, 1, "");
        t += 2;
        launch("aten::linear", "aten::mm", t,
               gemm_shapes ? strprintf("[[%lld, 64], [64, 64]]", static_cast<long long>(tokens)) : "", "nvjet_gemm");
        t += 20;
        if (attention) {
          launch("aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention", t,
                 strprintf("[[%lld, 4, %lld, 16], [%lld, 4, %lld, 16], [%lld, 4, %lld, 16]]", static_cast<long long>(B),
                           static_cast<long long>(nq), static_cast<long long>(B), static_cast<long long>(nkv),
                           static_cast<long long>(B), static_cast<long long>(nkv)),
                 "flash_fwd_kernel");
          t += 20;
        }
      }
      t += 100;
      if (profiler_steps) step(f + 2, t0 - 1, t - t0 - 50);
    }
    if (profiler_steps) {
      op("aten::empty", t + 1, 2, "");
      step(decodes + 3, t, 10);
    }
    return "{\"traceEvents\": [" + m_events + "]}";
  }

 private:
  void add(const std::string& e) { m_events += (m_events.empty() ? "" : ",\n") + e; }
  void op(const char* name, int64_t ts, int64_t dur, const std::string& dims) {
    add(strprintf(R"({"ph":"X","cat":"cpu_op","name":"%s","pid":1,"tid":1,"ts":%lld,"dur":%lld,"args":{%s}})", name,
                  static_cast<long long>(ts), static_cast<long long>(dur),
                  dims.empty() ? "" : ("\"Input Dims\": " + dims + ", \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"]").c_str()));
  }
  void step(int n, int64_t ts, int64_t dur) {
    add(strprintf(R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":1,"tid":1,"ts":%lld,"dur":%lld})", n,
                  static_cast<long long>(ts), static_cast<long long>(dur)));
  }
  void launch(const char* outer, const char* inner, int64_t ts, const std::string& dims, const char* kernel) {
    int64_t c = ++m_corr;
    op(outer, ts, 18, "");
    op(inner, ts + 1, 16, dims);
    add(strprintf(R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%lld,"dur":4,"args":{"correlation":%lld}})",
                  static_cast<long long>(ts + 2), static_cast<long long>(c)));
    add(strprintf(R"({"ph":"X","cat":"kernel","name":"%s","pid":0,"tid":7,"ts":%lld,"dur":8,"args":{"correlation":%lld}})",
                  kernel, static_cast<long long>(ts + 5), static_cast<long long>(c)));
  }
  std::string m_events;
  int64_t m_corr = 0;
};

trace_model load(const std::string& doc) {
  fs::path p = fs::temp_directory_path() / ("magpie_steps_test_" + std::to_string(::getpid()) + ".json");
  std::ofstream(p) << doc;
  auto m = load_trace_model(p);
  fs::remove(p);
  EXPECT_TRUE(m.ok());
  return std::move(m).value();
}

TEST(StepInference, GenerateTraceSplitsPerForwardWithPhasesFromAttention) {
  trace_model m = load(trace_builder().generate(4, 32, 5, true));
  stage_split s = split_steps(m);
  EXPECT_EQ(s.source, "forward_pattern");
  EXPECT_EQ(s.phase_method, "attention");
  EXPECT_TRUE(s.undecided.empty()) << s.undecided;
  ASSERT_EQ(s.steps.size(), 6u);
  EXPECT_EQ(s.steps[0].phase, step_phase::prefill_only);
  EXPECT_EQ(s.steps[0].batch_size, 128);
  for (size_t k = 1; k < 6; ++k) {
    EXPECT_EQ(s.steps[k].phase, step_phase::decode_only) << k;
    EXPECT_EQ(s.steps[k].batch_size, 4) << k;
    EXPECT_EQ(s.steps[k].num_requests, 4) << k;
    EXPECT_EQ(s.steps[k].gpu.size(), 4u) << k;  // two GEMM + two attention kernels, none lost to the last step
    EXPECT_GT(s.steps[k].cpu_end, s.steps[k].cpu_ts);
  }
  EXPECT_EQ(pick_step(s, inference_stage::prefill, std::nullopt).step, std::optional<size_t>(0));
  EXPECT_EQ(s.steps[pick_step(s, inference_stage::decode, 4).step.value()].phase, step_phase::decode_only);
}

TEST(StepInference, ProfilerStepRangesAreTheStepsWhenPresent) {
  trace_model m = load(trace_builder().generate(3, 20, 4, true, true, /*profiler_steps=*/true));
  stage_split s = split_steps(m);
  EXPECT_EQ(s.source, "profiler_steps");
  EXPECT_EQ(s.phase_method, "attention");
  ASSERT_EQ(s.steps.size(), 6u);  // five forwards and the trailing CPU-only step
  for (size_t k = 0; k < 6; ++k) EXPECT_EQ(s.steps[k].name, "ProfilerStep#" + std::to_string(k + 2)) << k;
  EXPECT_EQ(s.steps[0].phase, step_phase::prefill_only);
  EXPECT_EQ(s.steps[0].batch_size, 60);
  for (size_t k = 1; k < 5; ++k) {
    EXPECT_EQ(s.steps[k].phase, step_phase::decode_only) << k;
    EXPECT_EQ(s.steps[k].batch_size, 3) << k;
    EXPECT_EQ(s.steps[k].gpu.size(), 4u) << k;
  }
  EXPECT_EQ(s.steps[5].phase, step_phase::idle);
  EXPECT_TRUE(s.steps[5].gpu.empty());
  EXPECT_EQ(s.steps[pick_step(s, inference_stage::decode, std::nullopt).step.value()].phase, step_phase::decode_only);
}

TEST(StepInference, OneProfilerStepWithGpuWorkFallsBackToTheForwardPattern) {
  // A single annotated step (the others outside the recorded window) cannot split the trace.
  trace_builder b;
  std::string doc = b.generate(2, 16, 3, true);
  doc.insert(doc.rfind(']'), R"(,{"ph":"X","cat":"user_annotation","name":"ProfilerStep#0","pid":1,"tid":1,"ts":900,"dur":200})");
  stage_split s = split_steps(load(doc));
  EXPECT_EQ(s.source, "forward_pattern");
  EXPECT_EQ(s.steps.size(), 4u);
}

TEST(StepInference, GemmTokensDecideWithoutAttentionShapes) {
  trace_model m = load(trace_builder().generate(2, 16, 3, false));
  stage_split s = split_steps(m);
  EXPECT_EQ(s.phase_method, "gemm_tokens");
  ASSERT_EQ(s.steps.size(), 4u);
  EXPECT_EQ(s.steps[0].phase, step_phase::prefill_only);
  EXPECT_EQ(s.steps[3].phase, step_phase::decode_only);
}

TEST(StepInference, UndecidableTracesPickNoStep) {
  trace_model m = load(trace_builder().generate(2, 16, 3, false, /*gemm_shapes=*/false));
  stage_split s = split_steps(m);
  EXPECT_EQ(s.source, "forward_pattern");
  EXPECT_FALSE(s.undecided.empty());
  phase_pick p = pick_step(s, inference_stage::decode, std::nullopt);
  EXPECT_FALSE(p.step.has_value());
  EXPECT_NE(p.selection_reason.find("cannot be told apart"), std::string::npos) << p.selection_reason;
}

TEST(OpsByName, EachLauncherKeepsItsOwnKernels) {
  trace_model m = load(trace_builder().generate(2, 8, 1, true));
  analysis a = analyze(m, m.gpu, nullptr, {});
  ASSERT_EQ(a.ops_by_name.size(), 2u);
  for (const auto& r : a.ops_by_name) {
    EXPECT_EQ(r.count, 4);  // 2 forwards x 2 layers
    EXPECT_DOUBLE_EQ(r.direct_us, 32.0);
    EXPECT_DOUBLE_EQ(r.subtree_us, 32.0);
  }
  EXPECT_EQ(a.ops_by_name[0].name, "aten::mm");  // innermost launcher, not aten::linear
  EXPECT_EQ(a.ops_by_name[0].categories, std::vector<std::string>{"GEMM"});
  EXPECT_DOUBLE_EQ(a.ops_by_name[1].cum_pct, 100.0);
}

TEST(PerfModels, UpsampleFamily) {
  op_args up{"aten::upsample_nearest2d", "[[2, 3, 8, 8], []]", "[\"float\", \"\"]", "[\"\", \"[16, 16]\", \"\", \"\"]", ""};
  perf_result r = model_op(up);
  ASSERT_TRUE(r.computed);
  EXPECT_EQ(r.category, "elementwise");
  EXPECT_DOUBLE_EQ(r.flops, 2 * 3 * 16 * 16);
  EXPECT_DOUBLE_EQ(*r.bytes, (2 * 3 * 8 * 8 + 2 * 3 * 16 * 16) * 4.0);
  op_args bil{"aten::upsample_bilinear2d", "[[1, 1, 4, 4], [], [], []]", "[\"c10::BFloat16\", \"\", \"\", \"\"]",
              "[\"\", \"\", \"False\", \"[2.0, 2.0]\"]", ""};
  perf_result b = model_op(bil);
  ASSERT_TRUE(b.computed) << b.note;
  EXPECT_DOUBLE_EQ(b.flops, 64 * 8.0);  // 8 x 8 outputs, 4 taps x 2 FLOPs
  EXPECT_EQ(b.compute_spec, "vector_bf16");
  EXPECT_TRUE(has_perf_model("aten::_upsample_nearest_exact3d"));
  EXPECT_FALSE(has_perf_model("aten::upsample_nearest4d"));
}

TEST(PerfModels, InductorTritonKernelsByFusedKind) {
  op_args poi{"triton_poi_fused__to_copy_add_mul_silu_3", "[[64, 128], [64, 128], []]",
              "[\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]", "[\"\", \"\", \"8192\"]", ""};
  perf_result r = model_op(poi);
  ASSERT_TRUE(r.computed) << r.note;
  EXPECT_EQ(r.category, "elementwise");
  EXPECT_EQ(r.params["fused_ops"], "aten._to_copy, aten.add, aten.mul, aten.silu");
  EXPECT_DOUBLE_EQ(r.flops, (0 + 1 + 1 + 4) * 8192.0);
  EXPECT_DOUBLE_EQ(*r.bytes, 2 * 8192 * 2.0 + 2 * 8192.0);  // two tensors + the pointwise output
  op_args red{"triton_red_fused_mean_pow_1", "[[16, 4096], [16, 1], [], []]", "[\"float\", \"float\", \"\", \"\"]",
              "[\"\", \"\", \"16\", \"4096\"]", ""};
  perf_result q = model_op(red);
  ASSERT_TRUE(q.computed);
  EXPECT_EQ(q.category, "reduce");
  EXPECT_EQ(q.params["xnumel"], 16);
  EXPECT_EQ(q.params["rnumel"], 4096);
  EXPECT_DOUBLE_EQ(q.flops, (1 + 2) * 16 * 4096.0);
  EXPECT_EQ(op_category("triton_per_fused_sum_0", ""), "reduce");
}

// Found by fuzz_trace_reader (tests/regress/parsers/trace/): a fused-op segment shorter than a
// known op name ("a" vs "add") was read past the end of the name (ASan heap-buffer-overflow).
TEST(PerfModels, InductorNameWithTruncatedOpSegment) {
  for (const char* name : {"triton_poi_fused_a", "triton_poi_fused_ad", "triton_poi_fused_mul_s", "triton_poi_fused_"}) {
    op_args p{name, "[[64], []]", "[\"float\", \"Scalar\"]", "[\"\", \"64\"]", ""};
    perf_result r = model_op(p);
    ASSERT_TRUE(r.computed) << name << ": " << r.note;
    EXPECT_DOUBLE_EQ(r.flops, std::string(name) == "triton_poi_fused_mul_s" ? 64.0 : 0.0) << name;  // only "mul" is an op
  }
}

}  // namespace
}  // namespace magpie::trace
