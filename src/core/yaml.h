// YAML documents as a tree of config_node with file/line/column on every node, so
// configuration errors can name the file, line and field. The only file that sees
// yaml-cpp is yaml.cpp. Conversions to and from JSON: core/yaml_json.h.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/fs.h"
#include "core/json.h"
#include "core/status.h"

namespace magpie {

struct config_entry;

struct config_node {
  enum class kind { null, scalar, sequence, map };
  kind type = kind::null;
  std::string text;       ///< scalar text (after $VAR expansion when requested)
  bool quoted = false;    ///< scalar was quoted: never converted to number/bool
  std::vector<config_node> items;                             ///< sequence elements
  std::vector<config_entry> entries;  ///< map entries, in file order
  std::string file;
  int line = 0, column = 0;  ///< 1-based position of the node (0 when synthesised)
  int key_line = 0, key_column = 0;  ///< a map value: 1-based position of its key (0: none)

  bool is_null() const { return type == kind::null; }
  bool is_scalar() const { return type == kind::scalar; }
  bool is_sequence() const { return type == kind::sequence; }
  bool is_map() const { return type == kind::map; }
  /// Map lookup; nullptr when absent or not a map.
  const config_node* get(const std::string& key) const;
  /// "file:line:col" (or just file).
  std::string where() const;
};

/// One map entry (`first` = key, `second` = value: the names of the std::pair it replaces, which
/// cannot hold the incomplete config_node under every standard library).
struct config_entry {
  std::string first;
  config_node second;
};

/// Bounds checked while a document is built, before anything is copied or nested further: an
/// input beyond one is an error naming file:line:col, never a crash or an unbounded allocation.
/// Aliases count at their expanded size (a "billion laughs" document stops at max_nodes).
struct yaml_limits {
  size_t max_bytes = 4u << 20;        ///< document text, bytes (also the config-file size limit)
  size_t max_depth = 128;             ///< nested maps/sequences, aliases expanded
  size_t max_nodes = 1000000;         ///< nodes materialised, anchor and alias copies included
  size_t max_text_bytes = 64u << 20;  ///< scalar bytes materialised, alias copies included
  size_t max_aliases = 10000;         ///< alias uses (*name) in the document
};

struct yaml_options {
  bool expand_env = true;  ///< apply $VAR / ${VAR} expansion to every scalar
  yaml_limits limits;
};

/// One YAML document (an empty text is a null node). Errors (each naming file:line:col): invalid
/// YAML, an unclosed quote (at the end of the file, or continued on a line not indented more
/// than its parent), a duplicate key, a non-scalar key, an alias to a node that contains it, a
/// second document in the stream, and any yaml_limits bound. Merge keys (`<<: *base` or a list
/// of aliases) are applied as PyYAML does: explicit keys win, then earlier merged maps.
status_or<config_node> parse_yaml(const std::string& text, const std::string& file_name,
                                  const yaml_options& opts = {});
/// parse_yaml on a file read with read_input_file (regular files of at most limits.max_bytes).
status_or<config_node> load_yaml_file(const fs::path& path, const yaml_options& opts = {});
}  // namespace magpie
