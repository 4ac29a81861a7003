// JSON Schema (2020-12) fragments for the schemas a module publishes beside its codec: the
// schema of what its to_json writes, kept next to it so that the two change together. The MCP
// tools' output schemas are assembled from these (src/mcp).
#pragma once

#include <string>
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

}  // namespace magpie::schema
