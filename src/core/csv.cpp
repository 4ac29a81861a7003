#include "core/csv.h"

#include "core/strings.h"

namespace magpie {

std::string csv_escape(const std::string& f) {
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

status_or<std::vector<std::vector<std::string>>> parse_csv(const std::string& text, bool skip_comments) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool in_quotes = false, field_started = false, at_line_start = true;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (at_line_start && skip_comments && rows.empty() && c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      ++i;
      continue;
    }
    at_line_start = false;
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          i += 2;
          continue;
        }
        in_quotes = false;
      } else {
        field += c;
      }
      ++i;
      continue;
    }
    if (c == '"' && !field_started) {
      in_quotes = true;
      field_started = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
      field_started = false;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      row.push_back(field);
      field.clear();
      field_started = false;
      rows.push_back(std::move(row));
      row.clear();
      at_line_start = true;
    } else {
      field += c;
      field_started = true;
    }
    ++i;
  }
  if (in_quotes) return parse_error("unterminated quoted CSV field");
  if (field_started || !row.empty()) {
    row.push_back(field);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string fixed(double v, int decimals) { return strprintf("%.*f", decimals, v); }

}  // namespace magpie
