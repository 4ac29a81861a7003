// The one JSON Schema (2020-12 subset) library: fragments for the schemas a module publishes
// beside its codec (the schema of what its to_json writes, kept next to it so that the two
// change together; the MCP tools' output schemas are assembled from these), the builders of
// MCP tool arguments (s_*), and the validator of tool arguments and outputs. Validated subset:
// type, properties, patternProperties, required, additionalProperties (false or a schema),
// enum, minimum/maximum, minLength, items, minItems; default is documentation only.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json.h"

namespace magpie::schema {

/// {"type": type, "description": ...}; type is a JSON type name ("string", "number", ...).
json typed(const char* type, const std::string& description);
/// The same, also accepting null.
json typed_or_null(const char* type, const std::string& description);
/// A string that is one of `words` (the enum of a state codec).
json words(const std::string& description, const std::vector<std::string>& words);
/// An object with exactly these properties, every one required (a key written but not listed
/// fails validation: the schema and the writer change together).
json closed(json properties);
/// An object with these properties, only `required` required, no others.
json closed(json properties, const std::vector<std::string>& required);
json list_of(json items, const std::string& description);

// ---- builders of tool argument schemas (src/mcp)

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
/// The same schema that also accepts null (upstream Magpie's optional arguments default to None).
json or_null(json schema);
/// The same schema with a "default" annotation.
json with_default(json schema, json value);

/// "" when `value` satisfies `schema`, else "<json pointer>: <problem>" for the first violation.
std::string validate(const json& schema, const json& value);

}  // namespace magpie::schema
