#include "core/csv.h"

#include <algorithm>

#include "core/strings.h"

namespace magpie {

namespace {

/// Length of the valid UTF-8 sequence at s[i], or 0 with *bad = length of the maximal
/// invalid subpart (>= 1) to replace.
size_t utf8_seq(std::string_view s, size_t i, size_t* bad) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c == 0xE0) len = 3, lo = 0xA0;
  else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) len = 3;
  else if (c == 0xED) len = 3, hi = 0x9F;
  else if (c == 0xF0) len = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) len = 4;
  else if (c == 0xF4) len = 4, hi = 0x8F;
  size_t k = 1;
  for (; k < len && i + k < s.size(); ++k) {
    auto d = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (d < lo || d > hi) : (d < 0x80 || d > 0xBF)) break;
  }
  if (len && k == len) return len;
  *bad = k;
  return 0;
}

}  // namespace

std::string utf8_sanitize(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && static_cast<unsigned char>(s[i]) < 0x80) ++i;
  std::string out;
  size_t flushed = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t bad = 0, n = utf8_seq(s, i, &bad);
    if (n) {
      i += n;
      continue;
    }
    out.append(s.substr(flushed, i - flushed));
    out += "\xEF\xBF\xBD";  // U+FFFD
    i += bad;
    flushed = i;
  }
  if (flushed == 0) return std::string(s);
  out.append(s.substr(flushed));
  return out;
}

std::string csv_escape(const std::string& in) {
  bool ascii = std::all_of(in.begin(), in.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  std::string f = ascii ? in : utf8_sanitize(in);
  if (f.find_first_of(",\"\r\n") == std::string::npos) return f;
  return "\"" + replace_all(f, "\"", "\"\"") + "\"";
}

void csv_writer::add_comment(const std::string& line) { m_comments.push_back(line); }
void csv_writer::set_header(std::vector<std::string> c) { m_header = std::move(c); }
void csv_writer::add_row(std::vector<std::string> f) { m_rows.push_back(std::move(f)); }

std::string csv_writer::str() const {
  std::string out;
  for (const auto& c : m_comments) out += "# " + c + "\n";
  auto line = [&](const std::vector<std::string>& fields) {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i) out += ',';
      out += csv_escape(fields[i]);
    }
    out += '\n';
  };
  if (!m_header.empty()) line(m_header);
  for (const auto& r : m_rows) line(r);
  return out;
}

namespace {

/// The parser's position and output; end_field/end_row enforce the field bounds.
struct csv_state {
  const csv_limits& limits;
  const std::string& what;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  size_t line = 1;      ///< line of the current character
  size_t row_line = 1;  ///< line the current row began on (named in errors)
  size_t cells = 0;

  status end_field() {
    if (row.size() >= limits.max_fields_per_row)
      return parse_error("%s:%zu: more than %zu fields in a row", what.c_str(), row_line, limits.max_fields_per_row);
    if (++cells > limits.max_cells)
      return parse_error("%s:%zu: more than %zu fields in the file", what.c_str(), row_line, limits.max_cells);
    row.push_back(std::move(field));
    field.clear();
    return ok_status();
  }
  status end_row() {
    MAGPIE_RETURN_IF_ERROR(end_field());
    rows.push_back(std::move(row));
    row.clear();
    return ok_status();
  }
};

}  // namespace

status_or<std::vector<std::vector<std::string>>> parse_csv(const std::string& text, bool skip_comments,
                                                           const csv_limits& limits, const std::string& what) {
  if (text.size() > limits.max_bytes)
    return parse_error("%s: %zu bytes of CSV, over the %zu-byte limit", what.c_str(), text.size(), limits.max_bytes);
  csv_state st{limits, what, {}, {}, {}};
  bool in_quotes = false, field_started = false, at_line_start = true;
  size_t quote_line = 0;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (at_line_start && skip_comments && st.rows.empty() && c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      st.row_line = ++st.line;
      ++i;
      continue;
    }
    at_line_start = false;
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          st.field += '"';
          i += 2;
          continue;
        }
        in_quotes = false;
      } else {
        st.field += c;
        if (c == '\n') ++st.line;
      }
      ++i;
      continue;
    }
    if (c == '"' && !field_started) {
      in_quotes = true;
      field_started = true;
      quote_line = st.line;
    } else if (c == ',') {
      MAGPIE_RETURN_IF_ERROR(st.end_field());
      field_started = false;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      MAGPIE_RETURN_IF_ERROR(st.end_row());
      st.row_line = ++st.line;
      field_started = false;
      at_line_start = true;
    } else {
      st.field += c;
      field_started = true;
    }
    ++i;
  }
  if (in_quotes) return parse_error("%s:%zu: unterminated quoted CSV field", what.c_str(), quote_line);
  if (field_started || !st.row.empty()) MAGPIE_RETURN_IF_ERROR(st.end_row());
  return std::move(st.rows);
}

std::string fixed(double v, int decimals) { return strprintf("%.*f", decimals, v); }

}  // namespace magpie
