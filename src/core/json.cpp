#include "core/json.h"

#include <cmath>
#include <cstdlib>

#include "core/config.h"
#include "core/strings.h"

namespace magpie {
namespace {

/// 1-based line and column of byte offset `off`.
std::pair<size_t, size_t> line_col(std::string_view text, size_t off) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < off && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

bool number_char(char c) { return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }

/// A number token that strtod takes to infinity (nlohmann throws out_of_range for it).
bool overflows(std::string_view tok) {
  if (tok.size() < 309 && tok.find_first_of("eE") == std::string_view::npos) return false;
  std::string s(tok);
  return !std::isfinite(std::strtod(s.c_str(), nullptr));
}

struct hazard {
  size_t at = std::string_view::npos;  ///< byte offset, npos when none
  std::string why;
};

/// One pass outside strings: the first bracket nesting deeper than max_depth, or the first
/// number beyond double range.
hazard find_hazard(std::string_view t, size_t max_depth) {
  size_t depth = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (c == '"') {
      for (++i; i < t.size() && t[i] != '"'; ++i)
        if (t[i] == '\\') ++i;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return {i, strprintf("nesting deeper than %zu levels", max_depth)};
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t b = i;
      while (i + 1 < t.size() && number_char(t[i + 1])) ++i;
      if (overflows(t.substr(b, i + 1 - b))) return {b, "number out of the range of a double"};
    }
  }
  return {};
}

}  // namespace

status_or<json> parse_json(std::string_view text, const std::string& what, size_t max_depth) {
  if (hazard h = find_hazard(text, max_depth); h.at != std::string_view::npos) {
    auto [line, col] = line_col(text, h.at);
    return parse_error("%s:%zu:%zu: invalid JSON (%s)", what.c_str(), line, col, h.why.c_str());
  }
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    auto [line, col] = line_col(text, e.byte > 0 ? e.byte - 1 : 0);
    std::string msg = e.what();
    auto p = msg.find("parse error");
    if (p != std::string::npos) msg = msg.substr(p);
    return parse_error("%s:%zu:%zu: invalid JSON (%s)", what.c_str(), line, col, msg.c_str());
  } catch (const std::exception& e) {  // out_of_range and the like: no position is known
    return parse_error("%s: invalid JSON (%s)", what.c_str(), e.what());
  }
}

status_or<json> read_json_file(const fs::path& path, size_t max_bytes) {
  MAGPIE_ASSIGN_OR_RETURN(std::string text, read_input_file(path, max_bytes, "JSON"));
  return parse_json(text, path.string());
}

std::string dump_pretty(const json& value) {
  return value.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string dump_compact(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

status write_json_file(const fs::path& path, const json& value) {
  return write_file_atomic(path, dump_pretty(value));
}

double json_number(const json& obj, const char* key, double dflt) {
  if (!obj.is_object()) return dflt;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return dflt;
  return it->get<double>();
}

std::string json_string(const json& obj, const char* key, const std::string& dflt) {
  if (!obj.is_object()) return dflt;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return dflt;
  return it->get<std::string>();
}

bool json_bool(const json& obj, const char* key, bool dflt) {
  if (!obj.is_object()) return dflt;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_boolean()) return dflt;
  return it->get<bool>();
}

json json_finite(double v) {
  if (std::isfinite(v)) return v;
  return nullptr;
}

}  // namespace magpie
