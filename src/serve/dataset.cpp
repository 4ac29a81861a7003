#include "serve/dataset.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "core/config.h"
#include "core/json.h"
#include "core/strings.h"

namespace magpie::serve {

namespace {

constexpr int64_t k_first_token_id = 100;  ///< skip the low ids where special tokens live

// Common English words that are one token in the usual BPE vocabularies (with the space).
const char* const k_words[] = {
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by", "on", "not",
    "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an", "had", "they", "you", "were",
    "their", "one", "all", "we", "can", "her", "has", "there", "been", "if", "more", "when", "will", "would",
    "who", "so", "no", "she", "other", "its", "may", "these", "about", "them", "than", "some", "time", "into",
    "only", "do", "first", "any", "my", "now", "such", "like", "our", "over", "man", "me", "even", "most",
    "made", "after", "also", "did", "many", "before", "must", "through", "back", "years", "where", "much",
    "your", "way", "well", "down", "should", "because", "each", "just", "those", "people", "how", "too",
    "little", "state", "good", "very", "make", "world", "still", "own", "see", "men", "work", "long", "get",
    "here", "between", "both", "life", "being", "under", "never", "day", "same", "another", "know", "while",
    "last", "might", "us", "great", "old", "year", "off", "come", "since", "against", "go", "came", "right",
    "used", "take", "three"};
constexpr size_t k_num_words = sizeof(k_words) / sizeof(k_words[0]);

std::vector<prompt_spec> random_prompts(const dataset_options& o) {
  std::vector<int64_t> in_lens = sample_lengths(o.input_len, o.range_ratio, o.style, o.num_prompts, o.seed);
  std::vector<int64_t> out_lens = sample_lengths(o.output_len, o.range_ratio, o.style, o.num_prompts, o.seed + 1);
  std::mt19937_64 rng(o.seed + 2);
  int64_t span = std::max<int64_t>(1, o.vocab_size - k_first_token_id);
  std::vector<prompt_spec> out(o.num_prompts);
  for (size_t i = 0; i < o.num_prompts; ++i) {
    prompt_spec& p = out[i];
    int64_t offset = static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
    p.prompt_len = in_lens[i];
    p.output_len = out_lens[i];
    if (o.token_ids) {
      p.prompt_len_exact = true;
      p.token_ids.resize(static_cast<size_t>(in_lens[i]));
      for (int64_t j = 0; j < in_lens[i]; ++j)
        p.token_ids[static_cast<size_t>(j)] =
            static_cast<int32_t>(k_first_token_id + (offset + static_cast<int64_t>(i) + j) % span);
    } else {
      p.text.reserve(static_cast<size_t>(in_lens[i]) * 5);
      for (int64_t j = 0; j < in_lens[i]; ++j) {
        if (j) p.text.push_back(' ');
        p.text.append(k_words[static_cast<size_t>(offset + j) % k_num_words]);
      }
    }
  }
  return out;
}

// ShareGPT: [{"conversations": [{"from": "human", "value": ...}, {"from": "gpt", ...}]}].
// Like vLLM: first two turns; keep prompt >= 4 and output >= 4 tokens, prompt <= 1024 and
// prompt + output <= 2048 (token estimates here); shuffled with the seed.
status_or<std::vector<prompt_spec>> sharegpt_prompts(const dataset_options& o) {
  MAGPIE_ASSIGN_OR_RETURN(json doc, read_json_file(o.path));
  if (!doc.is_array()) return parse_error("%s: a ShareGPT dataset is a JSON array of conversations", o.path.c_str());
  std::vector<prompt_spec> pool;
  for (const auto& entry : doc) {
    if (!entry.is_object() || !entry.contains("conversations")) continue;
    const json& conv = entry["conversations"];
    if (!conv.is_array() || conv.size() < 2 || !conv[0].is_object() || !conv[1].is_object()) continue;
    std::string prompt = json_string(conv[0], "value"), completion = json_string(conv[1], "value");
    prompt_spec p;
    p.prompt_len = estimate_tokens(prompt);
    int64_t out_len = o.output_len > 0 ? o.output_len : estimate_tokens(completion);
    if (p.prompt_len < 4 || out_len < 4 || p.prompt_len > 1024 || p.prompt_len + out_len > 2048) continue;
    p.text = std::move(prompt);
    p.output_len = out_len;
    pool.push_back(std::move(p));
  }
  if (pool.empty()) return invalid_argument("%s: no usable ShareGPT conversations (need 2 turns within the length limits)", o.path.c_str());
  std::mt19937_64 rng(o.seed);
  std::shuffle(pool.begin(), pool.end(), rng);
  return pool;
}

// Custom JSONL: one object per line with "prompt" (text or a list of token ids) and an
// optional "output_tokens" (alias "max_tokens"); blank lines are skipped.
status_or<std::vector<prompt_spec>> custom_prompts(const dataset_options& o) {
  MAGPIE_ASSIGN_OR_RETURN(std::string text, read_input_file(o.path, k_json_max_file_bytes, "JSONL dataset"));
  std::vector<prompt_spec> pool;
  size_t line_no = 0;
  for (const std::string& line : split(text, '\n')) {
    ++line_no;
    if (trim(line).empty()) continue;
    std::string where = strprintf("%s:%zu", o.path.c_str(), line_no);
    MAGPIE_ASSIGN_OR_RETURN(json j, parse_json(line, where));
    if (!j.is_object() || !j.contains("prompt")) return invalid_argument("%s: expected an object with \"prompt\"", where.c_str());
    prompt_spec p;
    const json& pr = j["prompt"];
    if (auto text = json_as_string(pr)) {
      p.text = *text;
      p.prompt_len = estimate_tokens(p.text);
    } else if (pr.is_array() && !pr.empty()) {
      for (const auto& t : pr) {
        auto id = json_as_int(t);
        if (!t.is_number_integer() || !id || *id < std::numeric_limits<int32_t>::min() || *id > std::numeric_limits<int32_t>::max())
          return invalid_argument("%s: \"prompt\" list must hold token ids", where.c_str());
        p.token_ids.push_back(static_cast<int32_t>(*id));
      }
      p.prompt_len = static_cast<int64_t>(p.token_ids.size());
      p.prompt_len_exact = true;
    } else {
      return invalid_argument("%s: \"prompt\" must be a string or a non-empty list of token ids", where.c_str());
    }
    double out = json_number(j, "output_tokens", json_number(j, "max_tokens", 256));
    p.output_len = o.output_len > 0 ? o.output_len : static_cast<int64_t>(out);
    if (p.output_len < 1) return invalid_argument("%s: output_tokens must be >= 1", where.c_str());
    pool.push_back(std::move(p));
  }
  if (pool.empty()) return invalid_argument("%s: no prompts", o.path.c_str());
  return pool;
}

}  // namespace

int64_t estimate_tokens(std::string_view text) {
  return std::max<int64_t>(1, static_cast<int64_t>((text.size() + 3) / 4));
}

std::vector<int64_t> sample_lengths(int64_t len, double ratio, range_style style, size_t n, uint64_t seed) {
  int64_t lo = len, hi = len;
  if (style == range_style::symmetric) {
    lo = static_cast<int64_t>(std::floor(static_cast<double>(len) * (1.0 - ratio)));
    hi = static_cast<int64_t>(std::ceil(static_cast<double>(len) * (1.0 + ratio)));  // vLLM: floor low, ceil high
  } else {
    lo = static_cast<int64_t>(std::floor(static_cast<double>(len) * ratio));
  }
  lo = std::max<int64_t>(1, lo);
  hi = std::max(lo, hi);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  std::vector<int64_t> out(n);
  for (auto& v : out) v = dist(rng);
  return out;
}

status_or<std::vector<prompt_spec>> load_dataset(const dataset_options& o) {
  if (o.num_prompts == 0) return invalid_argument("--num-prompts must be >= 1");
  if (o.name == "random") {
    if (o.input_len < 1 || o.output_len < 1) return invalid_argument("random dataset: input and output lengths must be >= 1");
    if (o.range_ratio < 0 || (o.style == range_style::lower_bound && o.range_ratio > 1) ||
        (o.style == range_style::symmetric && o.range_ratio >= 1))
      return invalid_argument("random range ratio %g out of range ([0,1) for --random-range-ratio, [0,1] for RANDOM_RANGE_RATIO)",
                              o.range_ratio);
    return random_prompts(o);
  }
  if (o.path.empty()) return invalid_argument("dataset '%s' needs --dataset-path", o.name.c_str());
  std::vector<prompt_spec> pool;
  if (o.name == "sharegpt") {
    MAGPIE_ASSIGN_OR_RETURN(pool, sharegpt_prompts(o));
  } else if (o.name == "custom") {
    MAGPIE_ASSIGN_OR_RETURN(pool, custom_prompts(o));
  } else {
    return invalid_argument("unknown dataset '%s' (random, sharegpt, custom)", o.name.c_str());
  }
  std::vector<prompt_spec> out;
  out.reserve(o.num_prompts);
  for (size_t i = 0; i < o.num_prompts; ++i) out.push_back(pool[i % pool.size()]);
  return out;
}

}  // namespace magpie::serve
