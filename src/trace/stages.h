// Inference stage split: the steps of a serving or generate trace, each with its GPU events and
// phase, and one representative step per stage (upstream Magpie's phase pick, research magpie.md §7.3).
//
// Steps, in order of preference:
//   annotations    the step annotations of vLLM / SGLang / ATOM (annotations.h): phase and
//                  token counts from the annotation;
//   profiler_steps ProfilerStep#N ranges (prof.step() per forward), when at least two hold GPU work;
//   forward_pattern the model's repeated forward structure (step_infer.cpp): the root op name that
//                  starts every forward, chosen so that no GEMM precedes its first occurrence and
//                  every step holds the same number of GEMM ops (GPU-only traces: kernels);
//   none           nothing repeats: no steps.
// A step's GPU events are those launched from inside its CPU range (linked runtime events); an
// annotated step without linked GPU events uses the GPU span of the gpu_user_annotation of the
// same name and order. Without annotations the phase comes from the attention query length
// (N_Q = 1 per sequence: decode, else prefill; tokens = batch × N_Q), else from GEMM token
// counts (M < 2 × the smallest M: decode); when neither decides, `undecided` says why and no
// step is picked (no stage files rather than wrong ones).
// Pick per stage: the largest batch; for decode then the request count closest to CONC; ties
// → the median GPU busy time.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trace/analysis.h"
#include "trace/model.h"

namespace magpie::trace {

struct step_info {
  size_t idx = 0;
  std::string name;           ///< annotation name, or "iteration_<k>"
  step_phase phase = step_phase::unknown;
  std::optional<step_annotation> ann;
  int64_t batch_size = 0, num_requests = 0;
  int64_t cpu_ts = 0, cpu_end = 0;  ///< ns: the step's CPU range (inferred steps: up to the next step)
  std::vector<uint32_t> gpu;        ///< GPU events (indices into model.events)
  int64_t gpu_duration = 0, gpu_busy = 0;  ///< ns: last end − first start; union length
};

struct stage_split {
  std::string source;              ///< annotations | profiler_steps | forward_pattern | none
  std::string phase_method;        ///< how phases were told apart (annotations, attention, gemm_tokens)
  std::string undecided;           ///< non-empty: phases unknown, why (no step is picked)
  std::vector<step_info> steps;
  std::vector<std::string> notes;
};

stage_split split_steps(const trace_model& m);
/// The split of a trace without framework step annotations (step_infer.cpp).
stage_split infer_steps(const trace_model& m);

/// GPU events of `m` launched from inside each step's CPU range (appended to step.gpu), and
/// the steps' GPU duration / busy time.
void assign_gpu_by_launch(const trace_model& m, std::vector<step_info>& steps);
void finish_steps(const trace_model& m, std::vector<step_info>& steps);

/// The stages a step is picked for (words and aliases: trace/stage_codec.h).
enum class inference_stage { prefilldecode, decode, prefill };
constexpr inference_stage k_inference_stages[] = {inference_stage::prefilldecode, inference_stage::decode,
                                                  inference_stage::prefill};
/// The phase of the steps a stage picks; its name (step_phase_name) is upstream Magpie's output
/// label: prefilldecode → prefilldecode, decode → decode_only, prefill → prefill_only.
step_phase stage_phase(inference_stage s);

struct phase_pick {
  inference_stage stage = inference_stage::prefilldecode;
  std::string label, selection_reason;
  std::optional<size_t> step;      ///< index into split.steps
};
phase_pick pick_step(const stage_split& s, inference_stage stage, std::optional<int64_t> conc);

/// execution_details.csv of the split (one row per step).
std::string execution_details_csv(const stage_split& s);

}  // namespace magpie::trace
