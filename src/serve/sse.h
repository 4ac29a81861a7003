// Server-sent events (text/event-stream) framing, fed incrementally: bytes may be split or
// coalesced arbitrarily across reads (a read can end inside a line, inside "\r\n", or hold
// several events). Lines end in "\n", "\r\n" or "\r"; a blank line dispatches the event;
// lines starting with ':' are comments; only the `event` and `data` fields are kept.
// The callback form allocates nothing in steady state (buffers are reused).
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

 private:
  template <class F>
  void on_line(std::string_view line, F& on_event);

  std::string m_line;   ///< unfinished line
  std::string m_data;   ///< data of the event being built
  std::string m_event;  ///< event name of the event being built
  bool m_has_data = false;
  bool m_skip_lf = false;  ///< the previous chunk ended in '\r': a leading '\n' is its pair
  size_t m_bytes = 0;
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
  size_t i = 0;
  if (m_skip_lf && !bytes.empty()) {
    if (bytes[0] == '\n') i = 1;
    m_skip_lf = false;
  }
  while (i < bytes.size()) {
    size_t j = line_end(bytes, i);
    if (j == std::string_view::npos) {
      m_line.append(bytes.substr(i));
      return;
    }
    std::string_view piece = bytes.substr(i, j - i);
    if (m_line.empty()) {
      on_line(piece, on_event);
    } else {
      m_line.append(piece);
      std::string line;
      line.swap(m_line);
      on_line(line, on_event);
      if (m_line.empty()) {  // give the buffer back for reuse
        line.clear();
        m_line.swap(line);
      }
    }
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
    if (m_has_data) m_data.push_back('\n');
    m_data.append(value);
    m_has_data = true;
  } else if (field == "event") {
    m_event.assign(value);
  }
}

}  // namespace magpie::serve
