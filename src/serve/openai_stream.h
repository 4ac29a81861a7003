// Decoding of OpenAI-compatible streaming responses (/v1/completions and
// /v1/chat/completions with "stream": true) into timed token deliveries.
//
// Contract:
// - A *content event* is an SSE event whose first choice carries generated text
//   (`text` for completions; `delta.content`, `delta.reasoning_content` or `delta.reasoning`
//   for chat) or whose per-chunk usage shows completion_tokens growing. A role-only opening
//   chunk (`delta: {role: assistant, content: ""}`) and the final usage-only chunk are not.
// - All content events that arrive in one network read form one *delivery*, stamped with
//   that read's time: events coalesced by the network or a lagging client are not counted
//   as zero-length inter-token gaps.
// - Token counts per delivery come from usage deltas (vLLM's continuous_usage_stats) when
//   every event carries usage; otherwise they are unknown (-1).
// - `[DONE]` ends the stream; an `error` object (or "object": "error") is a server error.
// - Separately, every event with a non-empty `choices` array is a *choices chunk* (vLLM's
//   unit: role-only, empty-text and finish-only chunks included; usage-only chunks are not),
//   stamped with the time of the read that completed it. vLLM's TTFT, ITL and E2EL are
//   defined on these chunks (src/serve/metrics.h).
// - Limits (set_limits; src/serve/limits.h): an SSE line or event longer than max_event_bytes,
//   or more than max_chunks choices chunks, makes fatal() non-empty: the request must end
//   there. Nothing beyond the limits is kept, so a decoder's memory stays bounded whatever the
//   server sends. Server error messages and finish reasons are kept up to a few hundred bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "serve/sse.h"

namespace magpie::serve {

enum class api_kind { completions, chat };

struct delivery {
  int64_t t_ns = 0;     ///< monotonic time of the read that carried these tokens
  int32_t tokens = -1;  ///< tokens in this delivery from usage deltas; -1 unknown
  int32_t events = 0;   ///< content events merged into it
};

struct stream_result {
  std::vector<delivery> deliveries;  ///< content deliveries, in arrival order
  std::vector<int64_t> choice_times; ///< read time of every choices chunk, in arrival order
  int64_t prompt_tokens = -1;        ///< last usage.prompt_tokens seen (-1: never)
  int64_t completion_tokens = -1;    ///< last usage.completion_tokens seen (-1: never)
  bool done = false;                 ///< "[DONE]" received
  std::string finish_reason;         ///< last non-null finish_reason
  std::string error;                 ///< first server error or malformed event, "" if none
  size_t events = 0;                 ///< SSE events seen
  size_t content_events = 0;
  size_t role_only_events = 0;       ///< chat chunks with a role and no content
  size_t coalesced_events = 0;       ///< content events that shared a read with an earlier one
  size_t text_chars = 0;             ///< bytes of generated text
  std::string text;                  ///< generated `text` / `delta.content` (only when keep_text)
};

class openai_stream_decoder {
 public:
  explicit openai_stream_decoder(api_kind kind, bool keep_text = false) : m_kind(kind), m_keep_text(keep_text) {}
  /// 0: no limit. Set before the first on_body.
  void set_limits(uint64_t max_event_bytes, uint64_t max_chunks);
  /// Body bytes delivered by one network read at monotonic time t_ns.
  void on_body(std::string_view bytes, int64_t t_ns);
  /// Why the stream must not go on (a limit was passed); "" while it may.
  const std::string& fatal() const { return m_fatal; }
  /// True when unparsed bytes of an unfinished event remain (a truncated stream).
  bool has_partial_event() const { return m_parser.has_partial(); }
  const stream_result& result() const { return m_result; }
  stream_result& result() { return m_result; }

 private:
  struct event_info {
    int64_t delta = -2;    ///< token delta of a content event (-1 unknown); -2: not a content event
    bool choices = false;  ///< a non-empty `choices` array (a vLLM chunk)
  };
  /// Classifies one event's data, parsed in situ (modified).
  event_info on_event(std::string& data);

  api_kind m_kind;
  bool m_keep_text;
  sse_parser m_parser;
  stream_result m_result;
  std::string m_fatal;
  uint64_t m_max_event_bytes = 0, m_max_chunks = 0;
  int64_t m_usage_completion = 0;  ///< completion_tokens at the previous usage report
};

/// Output token count of a finished stream and where it came from:
/// "usage" (server-reported completion_tokens), "usage_deltas" (sum of per-delivery usage)
/// or "chunks" (one token per content event; an approximation for servers without usage).
int64_t output_token_count(const stream_result& r, std::string* source);

}  // namespace magpie::serve
