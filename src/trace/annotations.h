// Inference step annotations (research tracelens.md §5.1): the record_function names that
// vLLM, SGLang and ATOM put around each engine step, parsed into per-step token counts.
//   vLLM detailed  execute_<tok>_context_<R>(sq<a>sk<b>sqsq<c>sqsk<d>)_generation_<R>(sq…sk…sqsq…sqsk…)
//   vLLM native    execute_context_<R>(<sq>)_generation_<R>(<sq>)
//   SGLang         step[MIXED|EXTEND|PREFILL|DECODE|PREFILLDECODE|PREFILL_DECODE|MIX bs=<n> key=value…]
//   ATOM           prefill[bs=<n> tok=<t> …] / decode[bs=<n>/<max> tok=<t> …]
// sq = query tokens, sk = KV tokens, sqsq = Σ N_Q², sqsk = Σ N_Q·N_KV, per context (prefill)
// and generation (decode) group.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/json.h"

namespace magpie::trace {

/// What an inference step does: prefill and decode requests together (prefilldecode), prefill
/// only, decode only, no GPU work (idle), or not decidable from the trace (unknown).
enum class step_phase { prefilldecode, prefill_only, decode_only, idle, unknown };
/// The reports' words, as the enumerators are named (annotations.cpp).
const char* step_phase_name(step_phase p);
std::optional<step_phase> parse_step_phase(std::string_view word);
inline void to_json(json& j, step_phase p) { j = step_phase_name(p); }

struct step_annotation {
  std::string format;   ///< vllm_detailed | vllm_native | sglang_detailed | sglang_native | atom
  bool detailed = false;  ///< sk / sqsq / sqsk known (paged-attention model possible)
  int64_t c_reqs = 0, g_reqs = 0;  ///< requests in the context / generation groups
  int64_t c_sq = 0, c_sk = 0, c_sqsq = 0, c_sqsk = 0;
  int64_t g_sq = 0, g_sk = 0, g_sqsq = 0, g_sqsk = 0;
  int64_t batch_size = 0;  ///< tokens in the step (c_sq + g_sq), or SGLang's toks / bs
  int64_t num_requests = 0;

  /// prefilldecode (both groups), prefill_only, decode_only, or idle.
  step_phase phase() const;
};

/// nullopt when `name` is not a step annotation of a known framework.
std::optional<step_annotation> parse_step_annotation(std::string_view name);

}  // namespace magpie::trace
