// Benchmark prompts: the random dataset (token-id prompts, no tokenizer needed), ShareGPT
// JSON and a custom JSONL format.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/status.h"
#include "serve/request.h"

namespace magpie::serve {

/// How --random-range-ratio R spreads lengths around L:
/// symmetric: uniform integer in [floor(L·(1−R)), ceil(L·(1+R))] (vLLM `bench serve`);
/// lower_bound: uniform integer in [floor(L·R), L] (InferenceX/Magpie RANDOM_RANGE_RATIO; 1 = fixed).
enum class range_style { symmetric, lower_bound };

struct dataset_options {
  std::string name = "random";  ///< random | sharegpt | custom
  fs::path path;                ///< sharegpt / custom file
  size_t num_prompts = 1000;
  int64_t input_len = 1024;     ///< random: prompt tokens
  int64_t output_len = 128;     ///< random: max_tokens; sharegpt/custom: override when > 0
  double range_ratio = 0.0;
  range_style style = range_style::symmetric;
  int64_t vocab_size = 32000;   ///< random token ids are drawn from [100, vocab_size)
  bool token_ids = true;        ///< random: token-id prompts (false: text of common words, for chat)
  uint64_t seed = 0;
};

/// Returns exactly num_prompts prompts (file datasets are cycled when shorter), or an
/// error naming the file and line/entry.
status_or<std::vector<prompt_spec>> load_dataset(const dataset_options& opts);

/// Token estimate for text without a tokenizer: ceil(bytes / 4), at least 1.
int64_t estimate_tokens(std::string_view text);

/// Lengths for the random dataset (exposed for tests).
std::vector<int64_t> sample_lengths(int64_t len, double ratio, range_style style, size_t n, uint64_t seed);

}  // namespace magpie::serve
