// Typed, validated reading of config_node maps. Every error names file:line:col and the
// dotted field path ("kernels[1].compile_command"); unknown fields are rejected with the
// list of accepted ones.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/yaml.h"

namespace magpie {

using argv_list = std::vector<std::vector<std::string>>;

/// Reads a whole input file (a config, JSON or CSV file) of at most `max_bytes`. Refused, with
/// the path named: a missing or unreadable file, a directory, anything but a regular file (a
/// FIFO or device could block forever or never end), a file over `max_bytes` (checked before
/// reading and again while reading). `kind` names the file in messages ("YAML config").
status_or<std::string> read_input_file(const fs::path& path, size_t max_bytes, const char* kind);

/// "<where>: <field>: <message>".
status config_error(const config_node& at, const std::string& field, const std::string& message);

/// Upstream Magpie's command grammar: a string is split on whitespace into one argv (no shell, no
/// quoting); a list of strings is one argv; a list of lists is several argvs run in order.
/// Empty string/list → no command. Mixed lists are an error.
status_or<argv_list> parse_command_spec(const config_node& node, const std::string& field);
/// The same grammar for a CLI string (whitespace split).
argv_list command_from_string(const std::string& s);

class field_reader {
 public:
  /// `node` must be a map (else the first call reports it); `path` prefixes field names.
  field_reader(const config_node& node, std::string path);

  /// Declares `key` as accepted and returns it (nullptr when absent or null).
  const config_node* get(const std::string& key);
  status read_string(const std::string& key, std::string* out);
  status read_bool(const std::string& key, bool* out);
  status read_int(const std::string& key, int64_t* out);
  status read_double(const std::string& key, double* out);
  status read_string_list(const std::string& key, std::vector<std::string>* out);
  status read_command(const std::string& key, argv_list* out);
  /// A map of scalars to strings (env:), in file order.
  status read_string_map(const std::string& key, env_list* out);
  /// Accepts `key` without reading it (handled elsewhere).
  void allow(const std::string& key);
  /// Errors for keys that were never declared.
  status check_unknown() const;
  std::string field(const std::string& key) const;
  const config_node& node() const { return m_node; }

 private:
  const config_node& m_node;
  std::string m_path;
  std::set<std::string> m_known;
};

}  // namespace magpie
