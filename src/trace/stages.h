// Inference stage split: the steps of a serving trace, each with its GPU events and phase,
// and one representative step per stage (Magpie's phase pick, research magpie.md §7.3).
//
// Steps come from step annotations (annotations.h). A step's GPU events are those launched
// from inside its CPU range (linked runtime events); a step without linked GPU events uses
// the GPU span of the gpu_user_annotation of the same name and order.
// Without annotations ("pattern" mode) iterations start at each occurrence of the first root
// cpu_op's name (GPU-only traces: the first kernel's name); an iteration's tokens are the
// largest M of its GEMM ops; iterations with at most twice the smallest token count are decode,
// the others prefill (prefilldecode cannot be told apart without annotations).
// Pick per stage: the largest batch; for decode then the request count closest to CONC; ties
// → the median GPU busy time.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "trace/analysis.h"
#include "trace/model.h"

namespace magpie::trace {

struct step_info {
  size_t idx = 0;
  std::string name;           ///< annotation name, or "iteration_<k>"
  std::string phase;          ///< prefilldecode | prefill_only | decode_only | idle
  std::optional<step_annotation> ann;
  int64_t batch_size = 0, num_requests = 0;
  int64_t cpu_ts = 0, cpu_end = 0;  ///< ns
  std::vector<uint32_t> gpu;        ///< GPU events (indices into model.events)
  int64_t gpu_duration = 0, gpu_busy = 0;  ///< ns: last end − first start; union length
};

struct stage_split {
  std::string source;              ///< "annotations" | "pattern" | "none"
  std::vector<step_info> steps;
  std::vector<std::string> notes;
};

stage_split split_steps(const trace_model& m);

/// Canonical stage names: prefilldecode, decode, prefill (aliases: pd, mixed, prefill_decode,
/// prefill-decode, decode_only, decode-only, prefill_only, prefill-only); "" when unknown.
std::string canonical_stage(const std::string& s);
/// Magpie's output label: prefilldecode → prefilldecode, decode → decode_only, prefill → prefill_only.
std::string stage_label(const std::string& stage);

struct phase_pick {
  std::string stage, label, selection_reason;
  std::optional<size_t> step;      ///< index into split.steps
  json to_json(const stage_split& s) const;
};
phase_pick pick_step(const stage_split& s, const std::string& stage, std::optional<int64_t> conc);

/// execution_details.csv of the split (one row per step).
std::string execution_details_csv(const stage_split& s);

}  // namespace magpie::trace
