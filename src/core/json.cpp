#include "core/json.h"

#include <cmath>

#include "core/strings.h"

namespace magpie {

status_or<json> parse_json(std::string_view text, const std::string& what) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    // Compute line/column from the byte offset for a readable message.
    size_t off = e.byte > 0 ? e.byte - 1 : 0;
    size_t line = 1, col = 1;
    for (size_t i = 0; i < off && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string msg = e.what();
    auto p = msg.find("parse error");
    if (p != std::string::npos) msg = msg.substr(p);
    return parse_error("%s:%zu:%zu: invalid JSON (%s)", what.c_str(), line, col, msg.c_str());
  }
}

status_or<json> read_json_file(const fs::path& path) {
  MAGPIE_ASSIGN_OR_RETURN(std::string text, read_file(path));
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
