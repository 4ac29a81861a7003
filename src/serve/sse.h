// Server-sent events (text/event-stream) framing, fed incrementally: bytes may be split or
// coalesced arbitrarily across reads (a read can end inside a line, inside "\r\n", or hold
// several events). Lines end in "\n", "\r\n" or "\r"; a blank line dispatches the event;
// lines starting with ':' are comments; only the `event` and `data` fields are kept.
#pragma once

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
  /// Parses `bytes`, appending each completed event to `out` (not cleared).
  void feed(std::string_view bytes, std::vector<sse_event>& out);
  /// True when bytes of an unfinished line or event are buffered.
  bool has_partial() const { return !m_line.empty() || m_has_data || !m_event.empty(); }
  /// Bytes fed so far.
  size_t bytes_seen() const { return m_bytes; }

 private:
  void on_line(std::string_view line, std::vector<sse_event>& out);

  std::string m_line;   ///< unfinished line
  std::string m_data;   ///< data of the event being built
  std::string m_event;  ///< event name of the event being built
  bool m_has_data = false;
  bool m_skip_lf = false;  ///< the previous chunk ended in '\r': a leading '\n' is its pair
  size_t m_bytes = 0;
};

}  // namespace magpie::serve
