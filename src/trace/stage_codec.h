// The words of trace/stages.h's inference_stage (the --stages / analysis_stages words, with
// upstream Magpie's aliases) and of the engines' step-annotation kinds: the one place that maps
// between them and the enums.
#pragma once

#include <optional>
#include <string_view>

#include "core/json.h"
#include "trace/annotations.h"
#include "trace/stages.h"

namespace magpie::trace {

/// prefilldecode | decode | prefill (the report's canonical words).
const char* inference_stage_name(inference_stage s);
/// A stage word, any case, surrounding blanks ignored: prefilldecode (pd, mixed, prefill_decode,
/// prefill-decode), decode (decode_only, decode-only), prefill (prefill_only, prefill-only);
/// nullopt for anything else (the caller names the field).
std::optional<inference_stage> parse_inference_stage(std::string_view word);
inline void to_json(json& j, inference_stage s) { j = inference_stage_name(s); }

/// What an SGLang `step[KIND …]` or ATOM `KIND[…]` annotation says the step does.
enum class annotation_kind { mixed, prefill, decode };
/// SGLang kinds, any case: MIXED / MIX / PREFILLDECODE / PREFILL_DECODE (mixed), EXTEND /
/// PREFILL (prefill), DECODE; nullopt for anything else (not a step annotation).
std::optional<annotation_kind> parse_sglang_kind(std::string_view kind);
/// ATOM kinds, exact: prefill, decode; nullopt for anything else.
std::optional<annotation_kind> parse_atom_kind(std::string_view kind);

}  // namespace magpie::trace
