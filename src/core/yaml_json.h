// YAML ↔ JSON (core/yaml.h's tree as JSON, and JSON written as YAML); both in yaml.cpp, the one
// file that sees yaml-cpp.
#pragma once

#include <string>

#include "core/json.h"
#include "core/yaml.h"

namespace magpie {

/// A YAML tree as JSON: scalars typed as YAML 1.2 core schema would (int, float, bool, null)
/// unless quoted.
json config_node_json(const config_node& n);
/// Serialises a JSON value as YAML (for config snapshots).
std::string json_to_yaml(const json& value);

}  // namespace magpie
