// One benchmark request: what was sent and what came back, with monotonic timestamps
// (CLOCK_MONOTONIC nanoseconds, the clock of steady_clock on Linux) so they can be compared
// with the benchmark schedule and with a server's own records on the same host.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "serve/openai_stream.h"

namespace magpie::serve {

struct prompt_spec {
  std::vector<int32_t> token_ids;  ///< token-id prompt (random dataset on /v1/completions)
  std::string text;                ///< text prompt (ShareGPT, custom, chat)
  int64_t prompt_len = 0;          ///< prompt tokens: exact for token ids, else an estimate
  bool prompt_len_exact = false;
  int64_t output_len = 0;          ///< max_tokens requested
};

struct request_record {
  size_t index = 0;           ///< position in the dataset
  std::string id;             ///< X-Request-Id sent with the request
  bool warmup = false;        ///< warm-up requests are excluded from the metrics
  int64_t prompt_len = 0;     ///< dataset prompt length (tokens; see prompt_len_exact)
  int64_t max_tokens = 0;
  int64_t scheduled_ns = 0;   ///< when the schedule wanted it sent (absolute monotonic ns)
  int64_t arrival_ns = 0;     ///< when the client's scheduler dispatched it (0: never); arrival −
                              ///< scheduled is schedule slip, start − arrival the max-concurrency wait
  int64_t start_ns = 0;       ///< when the request write began (0: never sent)
  int64_t end_ns = 0;         ///< when the response ended or failed
  int http_status = 0;        ///< 0: no response status received
  bool success = false;       ///< complete stream with at least one generated token
  std::string error;          ///< why it failed ("" on success)
  bool reused_connection = false;
  stream_result stream;
};

/// Monotonic clock in nanoseconds (CLOCK_MONOTONIC).
int64_t monotonic_ns();

}  // namespace magpie::serve
