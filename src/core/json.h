// JSON values for reports, configs and protocols (nlohmann::ordered_json keeps key order).
// Use the non-throwing helpers below across module boundaries.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

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
int64_t json_int(const json& obj, const char* key, int64_t dflt);
/// The strings of an array member (absent, or items of other types: skipped).
std::vector<std::string> json_strings(const json& obj, const char* key);
/// The member `key` of an object; nullptr when `obj` is not an object or has no such key. A
/// const look-up that never inserts, throws or asserts (unlike operator[] on a missing key).
const json* json_member(const json& obj, const char* key);
/// A copy of the member, or null (json_member's rules).
json json_value(const json& obj, const char* key);

/// Typed views of one value, never throwing: nullopt when `v` holds another type. Integers
/// accept a JSON integer in range or a float without fraction in range.
std::optional<std::string> json_as_string(const json& v);
std::optional<double> json_as_number(const json& v);
std::optional<int64_t> json_as_int(const json& v);
std::optional<uint64_t> json_as_uint(const json& v);
std::optional<bool> json_as_bool(const json& v);

/// The fields of one object of a file that a codec decodes (result.json, batch.json, a
/// report). Every read checks the type: an error names the file (`where`) and the field path,
/// never an exception. `read` leaves *out unchanged when the key is absent or null;
/// `require` makes that an error too. Holds a reference: `obj` must outlive it.
class json_fields {
 public:
  json_fields(const json& obj, std::string where, std::string path = {});
  /// An error unless the value is an object (name it before reading fields).
  status check_object() const;
  template <typename T>
  status read(const char* key, T* out) const {
    const json* v = json_member(m_obj, key);
    if (v == nullptr || v->is_null()) return ok_status();
    return convert(*v, key, out);
  }
  template <typename T>
  status require(const char* key, T* out) const {
    const json* v = json_member(m_obj, key);
    if (v == nullptr || v->is_null()) return missing(key);
    return convert(*v, key, out);
  }
  /// The fields of a nested object (an empty object when absent).
  json_fields child(const char* key) const;
  /// "<where>: field '<path>.<key>'" for messages of the caller's own checks.
  std::string field(const char* key) const;
  const json& doc() const { return m_obj; }

 private:
  status missing(const char* key) const;
  status convert(const json& v, const char* key, std::string* out) const;
  status convert(const json& v, const char* key, fs::path* out) const;
  status convert(const json& v, const char* key, double* out) const;
  status convert(const json& v, const char* key, int64_t* out) const;
  status convert(const json& v, const char* key, int* out) const;
  status convert(const json& v, const char* key, uint64_t* out) const;
  status convert(const json& v, const char* key, bool* out) const;
  status convert(const json& v, const char* key, std::vector<std::string>* out) const;
  status convert(const json& v, const char* key, std::vector<int>* out) const;
  status convert(const json& v, const char* key, json* out) const;

  const json& m_obj;
  std::string m_where, m_path;
};

}  // namespace magpie
