// Per-request limits of the serving client: what one response may cost in time, bytes and
// memory before that request (never the run) is failed. Defaults are derived from the
// request's own workload (its prompt tokens and max_tokens); flags override them
// (docs/serving.md, "Limits"):
//
//   timeout         60 s + 0.5 s x max_tokens + 0.002 s x prompt tokens    --request-timeout S (0: none)
//   event bytes     4 MiB + 256 B x prompt tokens (one SSE line / event)    --max-event-bytes N (0: none)
//   response bytes  event bytes + 16 KiB x max_tokens (the response body)   --max-response-bytes N (0: none)
//   chunks          8 x max_tokens + 256 choices chunks (timestamps kept)   lifted with --max-response-bytes 0
//
// A compliant server sends about one chunk of a few hundred bytes per token, so these are
// far above what it needs; a server that streams without end, ignores max_tokens or sends an
// unbounded line hits one of them. Memory kept per stream is then at most about
// 2 x event bytes (the line buffer) + 24 B x chunks (timestamps) + the 256 KiB read buffer.
#pragma once

#include <cstdint>
#include <string>

namespace magpie::serve {

/// What the user asked for: < 0 derived from the workload (the default), 0 none, > 0 this value.
struct limit_policy {
  double request_timeout_s = -1;
  int64_t max_event_bytes = -1;
  int64_t max_response_bytes = -1;
};

/// The limits of one request; 0 means none.
struct request_limits {
  double timeout_s = 0;
  uint64_t max_event_bytes = 0;
  uint64_t max_response_bytes = 0;
  uint64_t max_chunks = 0;
  bool timeout_derived = false;  ///< timeout_s came from the workload formula
};

// The formula's constants (docs/serving.md states them).
constexpr double k_timeout_base_s = 60.0;
constexpr double k_timeout_per_output_token_s = 0.5;
constexpr double k_timeout_per_prompt_token_s = 0.002;
constexpr uint64_t k_event_base_bytes = 4u << 20;
constexpr uint64_t k_event_bytes_per_prompt_token = 256;
constexpr uint64_t k_response_bytes_per_output_token = 16u << 10;
constexpr uint64_t k_chunks_per_output_token = 8;
constexpr uint64_t k_chunks_extra = 256;

/// The limits of a request with `prompt_tokens` (estimate where not exact) and `max_tokens`.
request_limits limits_for(const limit_policy& p, int64_t prompt_tokens, int64_t max_tokens);

/// "timed out after 60.5 s (the default for 1 output token: 60 s + 0.5 s x max_tokens + 0.002 s x
/// prompt tokens; --request-timeout)" or "timed out after 2.0 s (--request-timeout)".
std::string timeout_reason(const request_limits& l);

/// A timeout for a plain request/response exchange (the model lookup, profiler control):
/// --request-timeout when given (> 0), else the formula's base; never past `time_left_s`
/// (the whole benchmark's --timeout); at least 0.1 s.
double exchange_timeout_s(const limit_policy& p, double time_left_s);

}  // namespace magpie::serve
