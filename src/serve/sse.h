// Server-sent events (text/event-stream) framing, fed incrementally: bytes may be split or
// coalesced arbitrarily across reads (a read can end inside a line, inside "\r\n", or hold
// several events). Lines end in "\n", "\r\n" or "\r"; a blank line dispatches the event;
// lines starting with ':' are comments; only the `event` and `data` fields are kept.
// The callback form allocates nothing in steady state (buffers are reused).
// Memory is bounded by set_max_event_bytes: an unfinished line plus the data of the event
// being built never exceed it; when they would, the parser stops (overflowed()), drops what it
// holds and ignores all further bytes (the stream cannot be resynchronised safely).
#pragma once

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace magpie::serve {

struct sse_event {
  std::string event;  ///< the `event:` field ("" when absent)
  std::string data;   ///< `data:` lines joined with '\n'
};

class sse_parser {
 public:
  /// Parses `bytes`; calls on_event(std::string& data, const std::string& event) per completed
  /// event. `data` may be modified (e.g. parsed in situ); it is cleared afterwards.
  template <class F>
  void feed_each(std::string_view bytes, F&& on_event);
  /// Parses `bytes`, appending each completed event to `out` (not cleared).
  void feed(std::string_view bytes, std::vector<sse_event>& out) {
    feed_each(bytes, [&](std::string& data, const std::string& event) { out.push_back({event, data}); });
  }
  /// True when bytes of an unfinished line or event are buffered.
  bool has_partial() const { return !m_line.empty() || m_has_data || !m_event.empty(); }
  /// Bytes fed so far.
  size_t bytes_seen() const { return m_bytes; }
  /// Bytes of one line / event held at most (0: no limit, the default).
  void set_max_event_bytes(size_t n) { m_max = n; }
  /// True once an event outgrew the limit; no event is reported after that.
  bool overflowed() const { return m_overflow; }

 private:
  template <class F>
  void on_line(std::string_view line, F& on_event);
  /// True (and the parser stopped) when holding `more` further bytes would pass the limit.
  bool over_limit(size_t more) {
    if (m_max == 0 || m_line.size() + m_data.size() + more <= m_max) return false;
    m_overflow = true;
    std::string().swap(m_line);
    std::string().swap(m_data);
    m_has_data = false;
    return true;
  }

  std::string m_line;   ///< unfinished line
  std::string m_data;   ///< data of the event being built
  std::string m_event;  ///< event name of the event being built
  bool m_has_data = false;
  bool m_skip_lf = false;  ///< the previous chunk ended in '\r': a leading '\n' is its pair
  bool m_overflow = false;
  size_t m_bytes = 0;
  size_t m_max = 0;
};

/// Position of the first '\n' or '\r' at or after i (two memchr scans; string_view's
/// find_first_of calls memchr once per byte).
inline size_t line_end(std::string_view s, size_t i) {
  const char* b = s.data() + i;
  size_t n = s.size() - i;
  const void* lf = std::memchr(b, '\n', n);
  size_t lim = lf ? static_cast<size_t>(static_cast<const char*>(lf) - b) : n;
  const void* cr = std::memchr(b, '\r', lim);
  if (cr) return i + static_cast<size_t>(static_cast<const char*>(cr) - b);
  return lf ? i + lim : std::string_view::npos;
}

template <class F>
void sse_parser::feed_each(std::string_view bytes, F&& on_event) {
  m_bytes += bytes.size();
  if (m_overflow) return;
  size_t i = 0;
  if (m_skip_lf && !bytes.empty()) {
    if (bytes[0] == '\n') i = 1;
    m_skip_lf = false;
  }
  while (i < bytes.size()) {
    size_t j = line_end(bytes, i);
    if (j == std::string_view::npos) {
      if (!over_limit(bytes.size() - i)) m_line.append(bytes.substr(i));
      return;
    }
    std::string_view piece = bytes.substr(i, j - i);
    if (m_line.empty()) {
      on_line(piece, on_event);
    } else {
      if (over_limit(piece.size())) return;
      m_line.append(piece);
      std::string line;
      line.swap(m_line);
      on_line(line, on_event);
      if (m_overflow) return;
      if (m_line.empty()) {  // give the buffer back for reuse
        line.clear();
        m_line.swap(line);
      }
    }
    if (m_overflow) return;
    if (bytes[j] == '\r') {
      if (j + 1 < bytes.size()) {
        i = bytes[j + 1] == '\n' ? j + 2 : j + 1;
      } else {
        m_skip_lf = true;
        i = j + 1;
      }
    } else {
      i = j + 1;
    }
  }
}

template <class F>
void sse_parser::on_line(std::string_view line, F& on_event) {
  if (line.empty()) {
    if (m_has_data) on_event(m_data, m_event);
    m_data.clear();
    m_event.clear();
    m_has_data = false;
    return;
  }
  if (line[0] == ':') return;
  size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (m_max != 0 && m_data.size() + (m_has_data ? 1 : 0) + value.size() > m_max) {  // the line is consumed: data only
      m_overflow = true;
      std::string().swap(m_data);
      m_has_data = false;
      return;
    }
    if (m_has_data) m_data.push_back('\n');
    m_data.append(value);
    m_has_data = true;
  } else if (field == "event") {
    m_event.assign(value);
  }
}

}  // namespace magpie::serve
