#include <gtest/gtest.h>

#include "trace/analysis.h"
#include "trace/analysis_printer.h"
#include "trace/model.h"
#include "trace/stage_codec.h"
#include "trace/stages.h"
#include "trace/timeline.h"

namespace magpie::trace {
namespace {

const fs::path k_src = MAGPIE_TEST_SOURCE_DIR;
const fs::path k_fix = k_src / "tests/fixtures/traces";
const fs::path k_real = k_src / "examples/traces/llama_tiny-rank-0.pt.trace.json.gz";

const trace_event* by_name(const trace_model& m, const std::string& n) {
  for (const auto& e : m.events)
    if (m.name(e) == n) return &e;
  return nullptr;
}

TEST(Intervals, MergeSubtractBusy) {
  auto m = merge_intervals({{5, 10}, {0, 3}, {3, 4}, {8, 12}, {20, 20}});
  ASSERT_EQ(m.size(), 3u);  // touching [0,3) and [3,4) merge
  EXPECT_EQ(m[0].begin, 0);
  EXPECT_EQ(m[0].end, 4);
  EXPECT_EQ(m[1].end, 12);
  EXPECT_EQ(total_length(m), 11);
  auto d = subtract_intervals(merge_intervals({{0, 100}, {150, 200}}), merge_intervals({{10, 20}, {90, 160}, {190, 300}}));
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(total_length(d), 10 + 70 + 30);
  EXPECT_EQ(busy_time({{0, 10}, {5, 15}, {30, 31}}), 16);
  EXPECT_EQ(busy_time({{30, 31}, {5, 15}, {0, 10}, {15, 15}}), 16);  // unsorted; an empty interval at an end
  std::vector<interval> scratch, v = {{7, 9}, {0, 2}, {1, 3}, {8, 20}};
  EXPECT_EQ(busy_time(v.data(), v.data() + v.size(), scratch), 3 + 13);
}

TEST(ChunkedStore, IndicesReferencesAndIterationAcrossChunks) {
  chunked_store<trace_event, 2> s;  // chunks of 4
  std::vector<trace_event*> refs;
  for (int i = 0; i < 11; ++i) {
    trace_event& e = s.emplace_back();
    EXPECT_EQ(e.parent, k_none);  // value-initialised by the constructor
    e.ts = i * 10;
    refs.push_back(&e);
  }
  ASSERT_EQ(s.size(), 11u);
  for (int i = 0; i < 11; ++i) {
    EXPECT_EQ(s[static_cast<size_t>(i)].ts, i * 10);
    EXPECT_EQ(&s[static_cast<size_t>(i)], refs[static_cast<size_t>(i)]);  // growth never moves an element
  }
  int64_t sum = 0;
  size_t n = 0;
  for (const auto& e : static_cast<const chunked_store<trace_event, 2>&>(s)) sum += e.ts, ++n;
  EXPECT_EQ(n, 11u);
  EXPECT_EQ(sum, 550);
}

TEST(TraceModel, LinkingTreeGraphLaunchAndTimeline) {
  auto m = load_trace_model(k_fix / "overlaps.json");
  ASSERT_TRUE(m.ok()) << m.get_status().message();
  EXPECT_EQ(m->device_name, "NVIDIA H200");
  EXPECT_EQ(m->linking_key, "correlation");
  EXPECT_EQ(m->gpu.size(), 6u);
  EXPECT_EQ(m->gpu_unlinked, 1u);  // orphan_kernel
  const trace_event* gemm = by_name(*m, "sm90_xmma_gemm_bf16bf16_bf16f32");
  ASSERT_NE(gemm, nullptr);
  ASSERT_NE(gemm->op, k_none);
  EXPECT_EQ(m->name(m->events[gemm->op]), "aten::addmm");
  EXPECT_EQ(m->name(m->events[m->events[gemm->op].parent]), "aten::linear");
  const trace_event* ga = by_name(*m, "graph_kernel_a");
  const trace_event* gb = by_name(*m, "graph_kernel_b");
  ASSERT_NE(ga->launcher, k_none);
  EXPECT_EQ(ga->launcher, gb->launcher);  // one cudaGraphLaunch, two replayed kernels
  EXPECT_EQ(m->name(m->events[ga->launcher]), "cudaGraphLaunch");

  timeline_breakdown t = gpu_timeline(*m, m->gpu);
  EXPECT_EQ(t.total, 350000);
  EXPECT_EQ(t.computation, 150000);
  EXPECT_EQ(t.exposed_comm, 100000);
  EXPECT_EQ(t.exposed_memcpy, 60000);
  EXPECT_EQ(t.busy, 310000);
  EXPECT_EQ(t.idle, 40000);
  EXPECT_EQ(t.total_comm, 150000);
  EXPECT_EQ(t.total_memcpy, 110000);
  EXPECT_EQ(t.computation + t.exposed_comm + t.exposed_memcpy + t.idle, t.total);
  // report.json analysis.communication: 50 of the 150 us of communication hide under compute.
  json comm = communication_json(t);
  EXPECT_EQ(comm["total_ns"].get<int64_t>(), 150000);
  EXPECT_EQ(comm["exposed_ns"].get<int64_t>(), 100000);
  EXPECT_EQ(comm["overlapped_ns"].get<int64_t>(), 50000);
  EXPECT_NEAR(comm["overlapped_pct"].get<double>(), 100.0 / 3, 1e-9);
  EXPECT_EQ(communication_json(timeline_breakdown{})["overlapped_pct"].get<double>(), 0.0);
  timeline_breakdown micro = gpu_timeline(*m, m->gpu, 50000);
  EXPECT_EQ(micro.micro_idle, 40000);
  EXPECT_EQ(micro.macro_idle, 0);
}

TEST(TraceModel, OpAttributionPerfModelAndRoofline) {
  auto m = load_trace_model(k_fix / "overlaps.json");
  ASSERT_TRUE(m.ok());
  gpu::gpu_spec spec;
  spec.name = "test";
  spec.mem_bw_gbps = 1000;
  spec.tflops["matrix_bf16"] = 100;
  analysis a = analyze(*m, m->gpu, &spec, {});
  EXPECT_EQ(a.unlinked_gpu_events, 1);
  const op_row* addmm = nullptr;
  bool synthetic_memcpy = false, graph_a = false;
  for (const auto& r : a.ops) {
    if (r.name == "aten::addmm") addmm = &r;
    if (r.name == "cudaMemcpyAsync->Memcpy DtoH (Device -> Pinned) (Synthetic Op)") synthetic_memcpy = true;
    if (r.name == "cudaGraphLaunch->graph_kernel_a (Synthetic Op)") graph_a = true;
    EXPECT_NE(r.name, "aten::linear");  // the modelled child owns the kernel
  }
  EXPECT_TRUE(synthetic_memcpy);
  EXPECT_TRUE(graph_a);
  ASSERT_NE(addmm, nullptr);
  EXPECT_EQ(addmm->category, "GEMM");
  EXPECT_DOUBLE_EQ(addmm->model.flops, 2.0 * 64 * 256 * 128 + 64 * 256);
  EXPECT_DOUBLE_EQ(*addmm->bytes, (64 * 128 + 128 * 256 + 64 * 256) * 2.0 + 256 * 2);
  EXPECT_DOUBLE_EQ(addmm->kernel_time_us_sum, 100.0);
  ASSERT_TRUE(addmm->roof.ok);
  double compute_us = addmm->model.flops / 100e12 * 1e6, memory_us = *addmm->bytes / 1000e9 * 1e6;
  EXPECT_DOUBLE_EQ(addmm->roof.time_us, std::max(compute_us, memory_us));
  EXPECT_EQ(addmm->roof.bound, memory_us > compute_us ? "MEMORY_BOUND" : "COMPUTE_BOUND");
  EXPECT_DOUBLE_EQ(addmm->pct_roofline_mean, addmm->roof.time_us / 100.0 * 100.0);
  std::string simple = roofline_simple_csv(a);
  EXPECT_EQ(simple.substr(0, simple.find('\r')),
            "source_category,op_name,param_signature,operation_count,num_kernels,kernel_time_ms_sum,time_pct,"
            "kernel_time_us_mean,gflops,data_moved_mb,arithmetic_intensity_flops_per_byte,achieved_tflops_mean,"
            "achieved_tbps_mean,compute_spec,roofline_bound,pct_roofline_mean,roofline_time_us,has_perf_model,"
            "params_json,input_dims,input_type");
  analysis no_spec = analyze(*m, m->gpu, nullptr, {});
  std::string s2 = roofline_simple_csv(no_spec);
  EXPECT_EQ(s2.find("roofline_bound"), std::string::npos);  // Magpie drops the columns without an arch
  bool nccl_comm = false;
  for (const auto& k : a.kernels)
    if (k.name.rfind("ncclDevKernel", 0) == 0) nccl_comm = k.category == "communication";
  EXPECT_TRUE(nccl_comm);
}

TEST(TraceModel, StreamOverrunsAreClipped) {
  auto m = load_trace_model(k_fix / "overrun.json");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->clipped_kernels, 1u);
  EXPECT_EQ(m->events[m->gpu[0]].dur(), 40000);  // long_k ends where next_k starts
  model_options raw;
  raw.clip_stream_overruns = false;
  auto r = load_trace_model(k_fix / "overrun.json", raw);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->events[r->gpu[0]].dur(), 1000000);
}

TEST(Stages, RealTraceAnnotationsAndPicks) {
  auto m = load_trace_model(k_real);
  ASSERT_TRUE(m.ok());
  stage_split s = split_steps(*m);
  EXPECT_EQ(s.source, "annotations");
  ASSERT_EQ(s.steps.size(), 8u);
  EXPECT_EQ(s.steps[0].phase, step_phase::prefill_only);
  EXPECT_EQ(s.steps[0].batch_size, 96);
  EXPECT_EQ(s.steps[1].phase, step_phase::prefilldecode);
  for (size_t i = 2; i < 8; ++i) EXPECT_EQ(s.steps[i].phase, step_phase::decode_only);
  size_t total = 0;
  for (const auto& st : s.steps) {
    EXPECT_GT(st.gpu.size(), 0u);
    EXPECT_LE(st.gpu_busy, st.gpu_duration);
    total += st.gpu.size();
  }
  EXPECT_EQ(total, m->gpu.size());  // every GPU event belongs to exactly one step
  auto p = pick_step(s, inference_stage::decode, 2);
  ASSERT_TRUE(p.step.has_value());
  EXPECT_EQ(p.label, "decode_only");
  EXPECT_GE(*p.step, 2u);
  auto pre = pick_step(s, inference_stage::prefill, std::nullopt);
  ASSERT_TRUE(pre.step.has_value());
  EXPECT_EQ(*pre.step, 0u);
  EXPECT_EQ(parse_inference_stage(" PD"), inference_stage::prefilldecode);
  EXPECT_EQ(parse_inference_stage("decode-only"), inference_stage::decode);
  EXPECT_EQ(parse_inference_stage("Prefill_Only"), inference_stage::prefill);
  EXPECT_EQ(parse_inference_stage("bogus"), std::nullopt);
  EXPECT_EQ(parse_inference_stage(""), std::nullopt);
  for (inference_stage st : k_inference_stages) EXPECT_EQ(parse_inference_stage(inference_stage_name(st)), st);
  EXPECT_STREQ(step_phase_name(stage_phase(inference_stage::decode)), "decode_only");
  // Step-annotation kinds: SGLang any case with aliases, ATOM exact; anything else is no annotation.
  EXPECT_EQ(parse_sglang_kind("EXTEND"), annotation_kind::prefill);
  EXPECT_EQ(parse_sglang_kind("Mix"), annotation_kind::mixed);
  EXPECT_EQ(parse_sglang_kind("idle"), std::nullopt);
  EXPECT_EQ(parse_atom_kind("decode"), annotation_kind::decode);
  EXPECT_EQ(parse_atom_kind("Decode"), std::nullopt);
}

}  // namespace
}  // namespace magpie::trace
