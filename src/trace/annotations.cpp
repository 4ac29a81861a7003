#include "trace/annotations.h"

#include <map>
#include <regex>

#include "core/enum_names.h"
#include "core/strings.h"
#include "trace/stage_codec.h"

namespace magpie::trace {

namespace {

constexpr std::pair<step_phase, const char*> k_phase_names[] = {
    {step_phase::prefilldecode, "prefilldecode"}, {step_phase::prefill_only, "prefill_only"},
    {step_phase::decode_only, "decode_only"},     {step_phase::idle, "idle"},
    {step_phase::unknown, "unknown"}};

}  // namespace

const char* step_phase_name(step_phase p) { return enum_name(k_phase_names, p, "unknown"); }
std::optional<step_phase> parse_step_phase(std::string_view word) { return enum_parse(k_phase_names, word); }

step_phase step_annotation::phase() const {
  bool c = c_reqs > 0 || c_sq > 0;
  bool g = g_reqs > 0 || g_sq > 0;
  if (c && g) return step_phase::prefilldecode;
  if (c) return step_phase::prefill_only;
  if (g) return step_phase::decode_only;
  return step_phase::idle;
}

namespace {

int64_t to_i(const std::string& s) { return parse_int(s).value_or(0); }

std::map<std::string, std::string> key_values(const std::string& body) {
  static const std::regex k_kv(R"(([A-Za-z_]+)=([0-9]+))");
  std::map<std::string, std::string> kv;
  for (std::sregex_iterator it(body.begin(), body.end(), k_kv), end; it != end; ++it) kv[(*it)[1]] = (*it)[2];
  return kv;
}

int64_t kv_int(const std::map<std::string, std::string>& kv, const char* k) {
  auto it = kv.find(k);
  return it == kv.end() ? 0 : to_i(it->second);
}

void finish(step_annotation& a) {
  a.batch_size = a.c_sq + a.g_sq;
  a.num_requests = a.c_reqs + a.g_reqs;
}

std::optional<step_annotation> parse_sglang(const std::string& kind_word, const std::string& body) {
  const std::optional<annotation_kind> kind = parse_sglang_kind(kind_word);
  if (!kind) return std::nullopt;
  auto kv = key_values(body);
  step_annotation a;
  a.format = "sglang_native";
  int64_t bs = kv_int(kv, "bs"), toks = kv_int(kv, "toks");
  const bool mixed = *kind == annotation_kind::mixed, context = *kind == annotation_kind::prefill;
  if (kv.count("c_sq") || kv.count("g_sq")) {
    a.format = "sglang_detailed";
    a.detailed = true;
    a.c_reqs = kv_int(kv, "c");
    a.g_reqs = kv_int(kv, "g");
    a.c_sq = kv_int(kv, "c_sq");
    a.c_sk = kv_int(kv, "c_sk");
    a.c_sqsq = kv_int(kv, "c_sqsq");
    a.c_sqsk = kv_int(kv, "c_sqsk");
    a.g_sq = kv_int(kv, "g_sq");
    a.g_sk = kv_int(kv, "g_sk");
    a.g_sqsq = kv_int(kv, "g_sqsq");
    a.g_sqsk = kv_int(kv, "g_sqsk");
    if (context && !a.c_reqs) a.c_reqs = bs;
    if (*kind == annotation_kind::decode && !a.g_reqs) a.g_reqs = bs;
  } else if (mixed) {
    a.c_reqs = kv_int(kv, "c");
    a.g_reqs = kv_int(kv, "g");
    if (!a.c_reqs && !a.g_reqs) a.c_reqs = bs;
    a.g_sq = a.g_reqs;
    a.c_sq = toks > a.g_sq ? toks - a.g_sq : toks;
  } else if (context) {
    a.c_reqs = bs;
    a.c_sq = toks ? toks : bs;
  } else {
    a.g_reqs = bs;
    a.g_sq = bs;
  }
  finish(a);
  if (!a.detailed && toks) a.batch_size = toks;
  if (!a.batch_size) a.batch_size = bs;
  return a;
}

std::optional<step_annotation> parse_atom(const std::string& kind_word, const std::string& body) {
  const std::optional<annotation_kind> kind = parse_atom_kind(kind_word);
  if (!kind) return std::nullopt;
  auto kv = key_values(body);
  step_annotation a;
  a.format = "atom";
  int64_t bs = kv_int(kv, "bs"), tok = kv_int(kv, "tok");
  if (*kind == annotation_kind::prefill) {
    a.c_reqs = bs;
    a.c_sq = tok ? tok : bs;
    if (kv.count("sk") && kv.count("sqsq") && kv.count("sqsk")) {
      a.detailed = true;
      a.c_sk = kv_int(kv, "sk");
      a.c_sqsq = kv_int(kv, "sqsq");
      a.c_sqsk = kv_int(kv, "sqsk");
    }
  } else {
    a.g_reqs = bs;
    a.g_sq = tok ? tok : bs;
    if (kv.count("sk") && kv.count("sqsk")) {
      a.detailed = true;
      a.g_sk = kv_int(kv, "sk");
      a.g_sqsq = kv.count("sqsq") ? kv_int(kv, "sqsq") : a.g_sq;
      a.g_sqsk = kv_int(kv, "sqsk");
    }
  }
  finish(a);
  return a;
}

}  // namespace

std::optional<step_annotation> parse_step_annotation(std::string_view name_in) {
  std::string name(name_in);
  std::smatch m;
  static const std::regex k_vllm_detailed(
      R"(^execute_(\d+)_context_(\d+)\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\)_generation_(\d+)\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\))");
  static const std::regex k_vllm_native(R"(^execute_context_(\d+)\((\d+)\)_generation_(\d+)\((\d+)\))");
  static const std::regex k_sglang(R"(^step\[([A-Za-z_]+)([^\]]*)\])");
  static const std::regex k_atom(R"(^(prefill|decode)\[([^\]]*)\])");
  if (std::regex_search(name, m, k_vllm_detailed)) {
    step_annotation a;
    a.format = "vllm_detailed";
    a.detailed = true;
    a.c_reqs = to_i(m[2]);
    a.c_sq = to_i(m[3]);
    a.c_sk = to_i(m[4]);
    a.c_sqsq = to_i(m[5]);
    a.c_sqsk = to_i(m[6]);
    a.g_reqs = to_i(m[7]);
    a.g_sq = to_i(m[8]);
    a.g_sk = to_i(m[9]);
    a.g_sqsq = to_i(m[10]);
    a.g_sqsk = to_i(m[11]);
    finish(a);
    return a;
  }
  if (std::regex_search(name, m, k_vllm_native)) {
    step_annotation a;
    a.format = "vllm_native";
    a.c_reqs = to_i(m[1]);
    a.c_sq = to_i(m[2]);
    a.g_reqs = to_i(m[3]);
    a.g_sq = to_i(m[4]);
    finish(a);
    return a;
  }
  if (std::regex_search(name, m, k_sglang)) return parse_sglang(m[1], m[2]);
  if (std::regex_search(name, m, k_atom)) return parse_atom(m[1], m[2]);
  return std::nullopt;
}

}  // namespace magpie::trace
