#include "core/json_schema.h"

#include <cmath>
#include <optional>
#include <regex>

#include "core/strings.h"

namespace magpie::schema {

json typed(const char* type, const std::string& description) { return {{"type", type}, {"description", description}}; }

json typed_or_null(const char* type, const std::string& description) {
  return {{"type", {type, "null"}}, {"description", description}};
}

json words(const std::string& description, const std::vector<std::string>& words) {
  return {{"type", "string"}, {"enum", words}, {"description", description}};
}

json closed(json properties) {
  std::vector<std::string> keys;
  for (auto it = properties.begin(); it != properties.end(); ++it) keys.push_back(it.key());
  return closed(std::move(properties), keys);
}

json closed(json properties, const std::vector<std::string>& required) {
  json j = {{"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
  if (!required.empty()) j["required"] = required;
  return j;
}

json list_of(json items, const std::string& description) {
  return {{"type", "array"}, {"items", std::move(items)}, {"description", description}};
}

// ---- builders of tool argument schemas, and the validator
namespace {

bool type_matches(const std::string& t, const json& v) {
  if (t == "string") return v.is_string();
  if (t == "integer") {
    auto x = json_as_number(v);
    return v.is_number_integer() || (v.is_number_float() && x && std::floor(*x) == *x);
  }
  if (t == "number") return v.is_number();
  if (t == "boolean") return v.is_boolean();
  if (t == "array") return v.is_array();
  if (t == "object") return v.is_object();
  if (t == "null") return v.is_null();
  return true;
}

std::string check(const json& s, const json& v, const std::string& path);

// The patternProperties entry whose pattern `key` matches (nullptr: none or no such keyword).
// Patterns come from magpie's own schemas (valid ECMAScript regexes), never from a client.
const json* pattern_schema(const json& s, const std::string& key) {
  const json* patterns = json_member(s, "patternProperties");
  if (!patterns || !patterns->is_object()) return nullptr;
  for (auto it = patterns->begin(); it != patterns->end(); ++it)
    if (std::regex_search(key, std::regex(it.key(), std::regex::ECMAScript))) return &it.value();
  return nullptr;
}

std::string check(const json& s, const json& v, const std::string& path) {
  if (!s.is_object()) return "";
  std::string where = path.empty() ? "/" : path;
  if (s.contains("type")) {
    bool ok = false;
    if (auto t = json_as_string(s["type"])) ok = type_matches(*t, v);
    else if (s["type"].is_array())
      for (const auto& t : s["type"]) ok = ok || (t.is_string() && type_matches(*json_as_string(t), v));
    if (!ok) return where + ": expected " + dump_compact(s["type"]) + ", got " + v.type_name();
  }
  if (s.contains("enum") && s["enum"].is_array()) {
    bool found = false;
    for (const auto& e : s["enum"]) found = found || e == v;
    if (!found) return where + ": must be one of " + dump_compact(s["enum"]);
  }
  if (auto x = json_as_number(v)) {
    auto lo = json_as_number(json_value(s, "minimum")), hi = json_as_number(json_value(s, "maximum"));
    if (lo && *x < *lo) return where + ": must be >= " + dump_compact(s["minimum"]);
    if (hi && *x > *hi) return where + ": must be <= " + dump_compact(s["maximum"]);
  }
  auto min_length = json_as_uint(json_value(s, "minLength"));
  if (auto text = json_as_string(v); text && min_length && text->size() < *min_length)
    return where + ": must have at least " + dump_compact(s["minLength"]) + " characters";
  if (v.is_array()) {
    auto min_items = json_as_uint(json_value(s, "minItems"));
    if (min_items && v.size() < *min_items)
      return where + ": needs at least " + dump_compact(s["minItems"]) + " items";
    if (s.contains("items"))
      for (size_t i = 0; i < v.size(); ++i)
        if (auto e = check(s["items"], v[i], path + "/" + std::to_string(i)); !e.empty()) return e;
  }
  if (v.is_object()) {
    if (s.contains("required"))
      for (const auto& r : s["required"])
        if (auto name = json_as_string(r); name && !v.contains(*name))
          return where + ": missing required property '" + *name + "'";
    const json* props = s.contains("properties") ? &s["properties"] : nullptr;
    bool closed = json_as_bool(json_value(s, "additionalProperties")) == false;
    const json* others = s.contains("additionalProperties") && s["additionalProperties"].is_object() ? &s["additionalProperties"] : nullptr;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (props && props->contains(it.key())) {
        if (auto e = check((*props)[it.key()], it.value(), path + "/" + it.key()); !e.empty()) return e;
      } else if (const json* p = pattern_schema(s, it.key())) {
        if (auto e = check(*p, it.value(), path + "/" + it.key()); !e.empty()) return e;
      } else if (others) {
        if (auto e = check(*others, it.value(), path + "/" + it.key()); !e.empty()) return e;
      } else if (closed) {
        return where + ": unknown property '" + it.key() + "'";
      }
    }
  }
  return "";
}

}  // namespace

json s_string(const std::string& d) { return {{"type", "string"}, {"description", d}}; }
json s_integer(const std::string& d, std::optional<double> min) {
  json j = {{"type", "integer"}, {"description", d}};
  if (min) j["minimum"] = *min;
  return j;
}
json s_number(const std::string& d, std::optional<double> min, std::optional<double> max) {
  json j = {{"type", "number"}, {"description", d}};
  if (min) j["minimum"] = *min;
  if (max) j["maximum"] = *max;
  return j;
}
json s_boolean(const std::string& d) { return {{"type", "boolean"}, {"description", d}}; }
json s_enum(const std::string& d, const std::vector<std::string>& values) {
  return {{"type", "string"}, {"description", d}, {"enum", values}};
}
json s_array(const json& items, const std::string& d, size_t min_items) {
  json j = {{"type", "array"}, {"description", d}, {"items", items}};
  if (min_items > 0) j["minItems"] = min_items;
  return j;
}
json s_any_object(const std::string& d) { return {{"type", "object"}, {"description", d}}; }
json s_object(std::initializer_list<std::pair<const char*, json>> properties, const std::vector<std::string>& required,
              bool closed) {
  json p = json::object();
  for (const auto& [k, v] : properties) p[k] = v;
  json j = {{"type", "object"}, {"properties", p}};
  if (!required.empty()) j["required"] = required;
  if (closed) j["additionalProperties"] = false;
  return j;
}
json or_null(json schema) {
  if (schema.contains("type") && schema["type"].is_string()) schema["type"] = {schema["type"], "null"};
  if (schema.contains("enum") && schema["enum"].is_array()) schema["enum"].push_back(nullptr);
  return schema;
}
json with_default(json schema, json value) {
  schema["default"] = std::move(value);
  return schema;
}

std::string validate(const json& schema, const json& value) { return check(schema, value, ""); }

}  // namespace magpie::schema
