// A small JSON Schema (2020-12 subset) builder and validator for tool arguments:
// type, properties, patternProperties, required, additionalProperties (false or a schema), enum, minimum/maximum,
// minLength, items, minItems, default (documentation only).
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json.h"

namespace magpie::mcp {

json s_string(const std::string& description);
json s_integer(const std::string& description, std::optional<double> minimum = std::nullopt);
json s_number(const std::string& description, std::optional<double> minimum = std::nullopt,
              std::optional<double> maximum = std::nullopt);
json s_boolean(const std::string& description);
json s_enum(const std::string& description, const std::vector<std::string>& values);
json s_array(const json& items, const std::string& description, size_t min_items = 0);
json s_any_object(const std::string& description);
/// {type: object, properties, required, additionalProperties: false}.
json s_object(std::initializer_list<std::pair<const char*, json>> properties,
              const std::vector<std::string>& required = {}, bool closed = true);
/// The same schema that also accepts null (Magpie's optional arguments default to None).
json or_null(json schema);
/// The same schema with a "default" annotation.
json with_default(json schema, json value);

/// "" when `value` satisfies `schema`, else "<json pointer>: <problem>" for the first violation.
std::string validate(const json& schema, const json& value);

}  // namespace magpie::mcp
