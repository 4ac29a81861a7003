#include "serve/limits.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"

namespace magpie::serve {

namespace {

uint64_t non_negative(int64_t v) { return v > 0 ? static_cast<uint64_t>(v) : 0; }

}  // namespace

request_limits limits_for(const limit_policy& p, int64_t prompt_tokens, int64_t max_tokens) {
  request_limits l;
  uint64_t in = non_negative(prompt_tokens), out = non_negative(max_tokens);
  if (p.request_timeout_s < 0) {
    l.timeout_s = k_timeout_base_s + k_timeout_per_output_token_s * static_cast<double>(out) +
                  k_timeout_per_prompt_token_s * static_cast<double>(in);
    l.timeout_derived = true;
  } else {
    l.timeout_s = p.request_timeout_s;
  }
  uint64_t derived_event = k_event_base_bytes + k_event_bytes_per_prompt_token * in;
  l.max_event_bytes = p.max_event_bytes < 0 ? derived_event : static_cast<uint64_t>(p.max_event_bytes);
  if (p.max_response_bytes < 0) {
    uint64_t event = l.max_event_bytes > 0 ? l.max_event_bytes : derived_event;
    l.max_response_bytes = event + k_response_bytes_per_output_token * out;
    l.max_chunks = k_chunks_per_output_token * out + k_chunks_extra;
  } else {
    l.max_response_bytes = static_cast<uint64_t>(p.max_response_bytes);
    // An explicit byte cap keeps the chunk cap; 0 (no response caps) lifts both.
    l.max_chunks = p.max_response_bytes == 0 ? 0 : k_chunks_per_output_token * out + k_chunks_extra;
  }
  return l;
}

std::string timeout_reason(const request_limits& l) {
  if (!l.timeout_derived) return strprintf("timed out after %.1f s (--request-timeout)", l.timeout_s);
  return strprintf("timed out after %.1f s (the default per-request timeout: %g s + %g s x max_tokens + %g s x prompt "
                   "tokens; --request-timeout sets another)",
                   l.timeout_s, k_timeout_base_s, k_timeout_per_output_token_s, k_timeout_per_prompt_token_s);
}

double exchange_timeout_s(const limit_policy& p, double time_left_s) {
  double t = p.request_timeout_s > 0 ? p.request_timeout_s : k_timeout_base_s;
  if (std::isfinite(time_left_s)) t = std::min(t, time_left_s);
  return std::max(t, 0.1);
}

}  // namespace magpie::serve
