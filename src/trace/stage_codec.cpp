#include "trace/stage_codec.h"

#include <string>

#include "core/enum_names.h"
#include "core/strings.h"

namespace magpie::trace {

namespace {

constexpr std::pair<inference_stage, const char*> k_stage_words[] = {
    {inference_stage::prefilldecode, "prefilldecode"}, {inference_stage::prefilldecode, "pd"},
    {inference_stage::prefilldecode, "mixed"},         {inference_stage::prefilldecode, "prefill_decode"},
    {inference_stage::prefilldecode, "prefill-decode"}, {inference_stage::decode, "decode"},
    {inference_stage::decode, "decode_only"},          {inference_stage::decode, "decode-only"},
    {inference_stage::prefill, "prefill"},             {inference_stage::prefill, "prefill_only"},
    {inference_stage::prefill, "prefill-only"}};

constexpr std::pair<annotation_kind, const char*> k_sglang_kinds[] = {
    {annotation_kind::mixed, "mixed"},   {annotation_kind::mixed, "mix"},
    {annotation_kind::mixed, "prefilldecode"}, {annotation_kind::mixed, "prefill_decode"},
    {annotation_kind::prefill, "extend"}, {annotation_kind::prefill, "prefill"},
    {annotation_kind::decode, "decode"}};

constexpr std::pair<annotation_kind, const char*> k_atom_kinds[] = {{annotation_kind::prefill, "prefill"},
                                                                    {annotation_kind::decode, "decode"}};

}  // namespace

const char* inference_stage_name(inference_stage s) { return enum_name(k_stage_words, s, "prefilldecode"); }

std::optional<inference_stage> parse_inference_stage(std::string_view word) {
  return enum_parse(k_stage_words, to_lower(trim(std::string(word))));
}

std::optional<annotation_kind> parse_sglang_kind(std::string_view kind) {
  return enum_parse(k_sglang_kinds, to_lower(std::string(kind)));
}

std::optional<annotation_kind> parse_atom_kind(std::string_view kind) { return enum_parse(k_atom_kinds, kind); }

}  // namespace magpie::trace
