#include "serve/openai_stream.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <cstring>

#include "core/strings.h"
#include "core/utf8.h"

namespace magpie::serve {

namespace {

std::string_view string_member(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) return {};
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

template <class Doc>
std::string error_message(const Doc& d) {
  auto it = d.FindMember("error");
  if (it != d.MemberEnd() && !it->value.IsNull()) {
    if (it->value.IsString()) return it->value.GetString();
    std::string_view m = string_member(it->value, "message");
    return m.empty() ? std::string("server error event") : std::string(m);
  }
  if (string_member(d, "object") == "error") {
    std::string_view m = string_member(d, "message");
    return m.empty() ? std::string("server error event") : std::string(m);
  }
  return {};
}

constexpr size_t k_kept_error_bytes = 300, k_kept_finish_reason_bytes = 64;
/// Usage counts beyond this are not believed (and keep every sum of them within int32 per delivery
/// and int64 per run).
constexpr int64_t k_max_token_count = 1 << 30;

// rapidjson parses recursively: an event nested millions deep would overflow the stack. OpenAI
// chunks nest about 6 deep (logprobs a few more). An event of at most k_small_event bytes nests
// at most half as deep, well within the stack; a larger one is scanned first and refused beyond
// k_max_json_depth levels.
constexpr size_t k_small_event = 4096;
constexpr int k_max_json_depth = 64;

/// True when the JSON text in s nests at most `limit` arrays/objects deep (strings skipped).
bool nesting_within(std::string_view s, int limit) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : s) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > limit) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

/// At most n bytes of s (never inside a UTF-8 character), "..." marking a cut.
std::string clipped(std::string_view s, size_t n) {
  return s.size() <= n ? std::string(s) : utf8_prefix(s, n) + "...";
}

}  // namespace

void openai_stream_decoder::set_limits(uint64_t max_event_bytes, uint64_t max_chunks) {
  m_max_event_bytes = max_event_bytes;
  m_max_chunks = max_chunks;
  m_parser.set_max_event_bytes(static_cast<size_t>(max_event_bytes));
}

void openai_stream_decoder::on_body(std::string_view bytes, int64_t t_ns) {
  if (!m_fatal.empty()) return;
  bool have_delivery = false;
  m_parser.feed_each(bytes, [&](std::string& data, const std::string&) {
    if (!m_fatal.empty()) return;
    event_info ev = on_event(data);
    if (ev.choices && m_max_chunks != 0 && m_result.choice_times.size() >= m_max_chunks) {
      m_fatal = strprintf("the server sent more than %llu choices chunks (the limit for this request's max_tokens; "
                          "--max-response-bytes 0 lifts it)", static_cast<unsigned long long>(m_max_chunks));
      return;
    }
    if (ev.choices) m_result.choice_times.push_back(t_ns);
    int64_t delta = ev.delta;
    if (delta == -2) return;
    ++m_result.content_events;
    if (!have_delivery) {
      m_result.deliveries.push_back({t_ns, static_cast<int32_t>(delta), 1});
      have_delivery = true;
      return;
    }
    delivery& d = m_result.deliveries.back();
    ++d.events;
    ++m_result.coalesced_events;
    d.tokens = (d.tokens < 0 || delta < 0) ? -1 : static_cast<int32_t>(std::min<int64_t>(int64_t{d.tokens} + delta, k_max_token_count));
  });
  if (m_parser.overflowed() && m_fatal.empty())
    m_fatal = strprintf("an SSE line or event exceeded %llu bytes (--max-event-bytes)", static_cast<unsigned long long>(m_max_event_bytes));
}

openai_stream_decoder::event_info openai_stream_decoder::on_event(std::string& raw) {
  ++m_result.events;
  event_info out;
  while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r')) raw.pop_back();
  if (raw == "[DONE]") {
    m_result.done = true;
    return out;
  }
  if (raw.empty()) return out;
  char head[120];  // for an error message: in-situ parsing rewrites the buffer
  size_t head_len = std::min(raw.size(), sizeof head);
  std::memcpy(head, raw.data(), head_len);
  // Stack-backed allocators: no heap allocation for typical chunks (rapidjson's usual trick).
  // The parse stack's first block must fit in parse_buf beside the pool's own header, or every
  // event would malloc (k_stack_bytes < sizeof parse_buf).
  constexpr size_t k_stack_bytes = 1024;
  char value_buf[8192], parse_buf[2048];
  rapidjson::MemoryPoolAllocator<> value_alloc(value_buf, sizeof value_buf), parse_alloc(parse_buf, sizeof parse_buf);
  rapidjson::GenericDocument<rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>, rapidjson::MemoryPoolAllocator<>> d(
      &value_alloc, k_stack_bytes, &parse_alloc);
  if (raw.size() > k_small_event && !nesting_within(raw, k_max_json_depth)) {
    if (m_result.error.empty())
      m_result.error = strprintf("malformed SSE data: JSON nested deeper than %d levels: %s", k_max_json_depth,
                                 clipped(std::string_view(head, head_len), 60).c_str());
    return out;
  }
  d.ParseInsitu(raw.data());
  if (d.HasParseError() || !d.IsObject()) {
    if (m_result.error.empty()) m_result.error = "malformed SSE data: " + std::string(head, head_len);
    return out;
  }
  if (std::string err = error_message(d); !err.empty()) {
    if (m_result.error.empty()) m_result.error = clipped(err, k_kept_error_bytes);
    return out;
  }
  int64_t delta = -1;
  auto usage = d.FindMember("usage");
  if (usage != d.MemberEnd() && usage->value.IsObject()) {
    auto pt = usage->value.FindMember("prompt_tokens");
    // Counts outside [0, k_max_token_count] are ignored: no overflow in deltas and sums.
    auto count = [](const rapidjson::Value& v) { return v.IsInt64() && v.GetInt64() >= 0 && v.GetInt64() <= k_max_token_count; };
    if (pt != usage->value.MemberEnd() && count(pt->value)) m_result.prompt_tokens = pt->value.GetInt64();
    auto ct = usage->value.FindMember("completion_tokens");
    if (ct != usage->value.MemberEnd() && count(ct->value)) {
      int64_t c = ct->value.GetInt64();
      delta = c - m_usage_completion;
      m_usage_completion = c;
      m_result.completion_tokens = c;
    }
  }
  auto choices = d.FindMember("choices");
  std::string_view text, content;
  bool role_only = false;
  out.choices = choices != d.MemberEnd() && choices->value.IsArray() && !choices->value.Empty();
  if (out.choices) {
    const rapidjson::Value& c0 = choices->value[0];
    if (m_kind == api_kind::completions) {
      text = content = string_member(c0, "text");
    } else if (c0.IsObject()) {
      auto dl = c0.FindMember("delta");
      if (dl != c0.MemberEnd() && dl->value.IsObject()) {
        text = content = string_member(dl->value, "content");
        if (text.empty()) text = string_member(dl->value, "reasoning_content");
        if (text.empty()) text = string_member(dl->value, "reasoning");
        role_only = text.empty() && !string_member(dl->value, "role").empty();
      }
    }
    std::string_view fr = string_member(c0, "finish_reason");
    if (!fr.empty()) m_result.finish_reason = clipped(fr, k_kept_finish_reason_bytes);
  }
  if (m_keep_text && !content.empty()) m_result.text.append(content);
  if (!text.empty()) {
    m_result.text_chars += text.size();
    out.delta = delta < 0 ? -1 : delta;
  } else if (delta > 0 && out.choices) {
    out.delta = delta;  // tokens whose text the server withheld (e.g. partial UTF-8)
  } else if (role_only) {
    ++m_result.role_only_events;
  }
  return out;
}

int64_t output_token_count(const stream_result& r, std::string* source) {
  if (r.completion_tokens >= 0) {
    if (source) *source = "usage";
    return r.completion_tokens;
  }
  int64_t sum = 0;
  bool known = !r.deliveries.empty();
  for (const auto& d : r.deliveries) {
    if (d.tokens < 0) known = false;
    sum += d.tokens;
  }
  if (known) {
    if (source) *source = "usage_deltas";
    return sum;
  }
  if (source) *source = "chunks";
  return static_cast<int64_t>(r.content_events);
}

}  // namespace magpie::serve
