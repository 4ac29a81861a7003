#include "core/json.h"

#include <cmath>
#include <cstdlib>
#include <limits>

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

int64_t json_int(const json& obj, const char* key, int64_t dflt) {
  const json* v = json_member(obj, key);
  return v ? json_as_int(*v).value_or(dflt) : dflt;
}

std::vector<std::string> json_strings(const json& obj, const char* key) {
  std::vector<std::string> out;
  const json* v = json_member(obj, key);
  if (v == nullptr || !v->is_array()) return out;
  for (const auto& x : *v)
    if (x.is_string()) out.push_back(x.get<std::string>());
  return out;
}

const json* json_member(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

json json_value(const json& obj, const char* key) {
  const json* v = json_member(obj, key);
  return v ? *v : json(nullptr);
}

std::optional<std::string> json_as_string(const json& v) {
  if (!v.is_string()) return std::nullopt;
  return v.get<std::string>();
}

std::optional<double> json_as_number(const json& v) {
  if (!v.is_number()) return std::nullopt;
  return v.get<double>();
}

std::optional<int64_t> json_as_int(const json& v) {
  if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<int64_t>();
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    // 2^63 is exactly representable; every double below it converts without overflow.
    if (!std::isfinite(d) || std::trunc(d) != d || d < -9223372036854775808.0 || d >= 9223372036854775808.0)
      return std::nullopt;
    return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

std::optional<uint64_t> json_as_uint(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    if (i < 0) return std::nullopt;
    return static_cast<uint64_t>(i);
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (!std::isfinite(d) || std::trunc(d) != d || d < 0 || d >= 18446744073709551616.0) return std::nullopt;
    return static_cast<uint64_t>(d);
  }
  return std::nullopt;
}

std::optional<bool> json_as_bool(const json& v) {
  if (!v.is_boolean()) return std::nullopt;
  return v.get<bool>();
}

// ---- json_fields ----

json_fields::json_fields(const json& obj, std::string where, std::string path)
    : m_obj(obj), m_where(std::move(where)), m_path(std::move(path)) {}

std::string json_fields::field(const char* key) const {
  std::string f = m_path.empty() ? std::string(key) : m_path + "." + key;
  return m_where + ": field '" + f + "'";
}

status json_fields::check_object() const {
  if (m_obj.is_object()) return ok_status();
  std::string what = m_path.empty() ? std::string("the document") : "field '" + m_path + "'";
  return invalid_argument("%s: %s must be an object, got %s", m_where.c_str(), what.c_str(), m_obj.type_name());
}

status json_fields::missing(const char* key) const {
  return invalid_argument("%s is missing", field(key).c_str());
}

namespace {
status mistyped(const std::string& field, const char* expected, const json& v) {
  return invalid_argument("%s: expected %s, got %s", field.c_str(), expected, v.type_name());
}
}  // namespace

status json_fields::convert(const json& v, const char* key, std::string* out) const {
  auto s = json_as_string(v);
  if (!s) return mistyped(field(key), "a string", v);
  *out = std::move(*s);
  return ok_status();
}

status json_fields::convert(const json& v, const char* key, fs::path* out) const {
  auto s = json_as_string(v);
  if (!s) return mistyped(field(key), "a path (string)", v);
  *out = std::move(*s);
  return ok_status();
}

status json_fields::convert(const json& v, const char* key, double* out) const {
  auto d = json_as_number(v);
  if (!d) return mistyped(field(key), "a number", v);
  *out = *d;
  return ok_status();
}

status json_fields::convert(const json& v, const char* key, int64_t* out) const {
  auto i = json_as_int(v);
  if (!i) return mistyped(field(key), "an integer", v);
  *out = *i;
  return ok_status();
}

status json_fields::convert(const json& v, const char* key, int* out) const {
  auto i = json_as_int(v);
  if (!i || *i < std::numeric_limits<int>::min() || *i > std::numeric_limits<int>::max())
    return mistyped(field(key), "an integer", v);
  *out = static_cast<int>(*i);
  return ok_status();
}

status json_fields::convert(const json& v, const char* key, uint64_t* out) const {
  auto u = json_as_uint(v);
  if (!u) return mistyped(field(key), "a non-negative integer", v);
  *out = *u;
  return ok_status();
}

status json_fields::convert(const json& v, const char* key, bool* out) const {
  auto b = json_as_bool(v);
  if (!b) return mistyped(field(key), "true or false", v);
  *out = *b;
  return ok_status();
}

status json_fields::convert(const json& v, const char* key, std::vector<std::string>* out) const {
  if (!v.is_array()) return mistyped(field(key), "a list of strings", v);
  std::vector<std::string> r;
  for (const auto& x : v) {
    auto s = json_as_string(x);
    if (!s) return mistyped(field(strprintf("%s[%zu]", key, r.size()).c_str()), "a string", x);
    r.push_back(std::move(*s));
  }
  *out = std::move(r);
  return ok_status();
}

status json_fields::convert(const json& v, const char* key, std::vector<int>* out) const {
  if (!v.is_array()) return mistyped(field(key), "a list of integers", v);
  std::vector<int> r;
  for (const auto& x : v) {
    auto i = json_as_int(x);
    if (!i || *i < std::numeric_limits<int>::min() || *i > std::numeric_limits<int>::max())
      return mistyped(field(strprintf("%s[%zu]", key, r.size()).c_str()), "an integer", x);
    r.push_back(static_cast<int>(*i));
  }
  *out = std::move(r);
  return ok_status();
}

status json_fields::convert(const json& v, const char* /*key*/, json* out) const {
  *out = v;
  return ok_status();
}

json_fields json_fields::child(const char* key) const {
  static const json k_empty = json::object();
  const json* v = json_member(m_obj, key);
  std::string path = m_path.empty() ? std::string(key) : m_path + "." + key;
  return json_fields(v && !v->is_null() ? *v : k_empty, m_where, path);
}

}  // namespace magpie
