#include "serve/sse.h"

namespace magpie::serve {

void sse_parser::feed(std::string_view bytes, std::vector<sse_event>& out) {
  m_bytes += bytes.size();
  size_t i = 0;
  if (m_skip_lf && !bytes.empty()) {
    if (bytes[0] == '\n') i = 1;
    m_skip_lf = false;
  }
  while (i < bytes.size()) {
    size_t j = bytes.find_first_of("\r\n", i);
    if (j == std::string_view::npos) {
      m_line.append(bytes.substr(i));
      return;
    }
    std::string_view piece = bytes.substr(i, j - i);
    if (m_line.empty()) {
      on_line(piece, out);
    } else {
      m_line.append(piece);
      std::string line;
      line.swap(m_line);
      on_line(line, out);
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

void sse_parser::on_line(std::string_view line, std::vector<sse_event>& out) {
  if (line.empty()) {
    if (m_has_data) {
      out.push_back({std::move(m_event), std::move(m_data)});
      m_data.clear();
    }
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
