// JSON values for reports, configs and protocols (nlohmann::ordered_json keeps key order).
// Use the non-throwing helpers below across module boundaries.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/fs.h"
#include "core/status.h"

namespace magpie {

using json = nlohmann::ordered_json;

/// Nesting bound of parse_json: nlohmann's copy, compare and dump recurse once per level.
constexpr size_t k_json_max_depth = 512;
/// Size bound of read_json_file (large serving datasets fit; a runaway file does not).
constexpr size_t k_json_max_file_bytes = size_t{2} << 30;

/// Parses text; a syntax error becomes parse_error naming `what`, line and column. Checked
/// before nlohmann sees the text: nesting deeper than `max_depth` and numbers beyond double
/// range (which nlohmann reports by an exception other than parse_error).
status_or<json> parse_json(std::string_view text, const std::string& what = "JSON",
                           size_t max_depth = k_json_max_depth);
/// A regular file of at most `max_bytes` (read_input_file), then parse_json.
status_or<json> read_json_file(const fs::path& path, size_t max_bytes = k_json_max_file_bytes);
/// Pretty-printed (2 spaces) with a trailing newline, written atomically.
status write_json_file(const fs::path& path, const json& value);
/// Compact single-line dump; invalid UTF-8 is replaced, never throws.
std::string dump_compact(const json& value);
std::string dump_pretty(const json& value);

/// Lookup helpers returning a default when the key is absent or of another type.
double json_number(const json& obj, const char* key, double dflt);
std::string json_string(const json& obj, const char* key, const std::string& dflt = {});
bool json_bool(const json& obj, const char* key, bool dflt);
/// A double that may be NaN/inf becomes null (JSON has no NaN).
json json_finite(double v);

}  // namespace magpie
