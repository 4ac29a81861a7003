#include "core/json_schema.h"

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

}  // namespace magpie::schema
