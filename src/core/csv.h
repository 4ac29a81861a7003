// CSV writing (RFC 4180 quoting) and a small reader for tests and parsers of tool output.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace magpie {

/// Quotes a field when it holds a comma, quote, CR or LF. Invalid UTF-8 is replaced (utf8_sanitize):
/// every CSV magpie writes is valid UTF-8.
std::string csv_escape(const std::string& field);

class csv_writer {
 public:
  void add_comment(const std::string& line);  ///< "# line" before the header
  void set_header(std::vector<std::string> columns);
  void add_row(std::vector<std::string> fields);
  std::string str() const;
  size_t rows() const { return m_rows.size(); }

 private:
  std::vector<std::string> m_comments;
  std::vector<std::string> m_header;
  std::vector<std::vector<std::string>> m_rows;
};

/// Bounds of parse_csv, checked as it goes (an empty field costs one input byte but a whole
/// std::string in memory, so fields are bounded separately from bytes).
struct csv_limits {
  size_t max_bytes = 256u << 20;
  size_t max_fields_per_row = 10000;
  size_t max_cells = 10000000;  ///< fields in the whole text
};

/// Parses CSV text (quoted fields with embedded commas/newlines/quotes allowed).
/// Lines starting with '#' before the first record are skipped when skip_comments.
/// Errors name `what` and the line: an unterminated quote (the line it opened on) or a bound.
status_or<std::vector<std::vector<std::string>>> parse_csv(const std::string& text, bool skip_comments = true,
                                                           const csv_limits& limits = {},
                                                           const std::string& what = "CSV");

/// "%.2f"-style formatting used by upstream Magpie's CSVs.
std::string fixed(double v, int decimals);

}  // namespace magpie
