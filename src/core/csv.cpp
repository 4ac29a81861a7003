#include "core/csv.h"

#include <algorithm>

#include "core/strings.h"
#include "core/utf8.h"

namespace magpie {

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
