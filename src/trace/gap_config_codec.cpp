#include "trace/gap_config_codec.h"

#include <algorithm>

namespace magpie::trace {

namespace {

json optional_list(const std::optional<std::vector<std::string>>& v) {
  if (!v) return nullptr;
  json a = json::array();
  for (const auto& s : *v) a.push_back(s);
  return a;
}

status read_optional_list(const json& j, const char* key, std::optional<std::vector<std::string>>* out) {
  if (!j.contains(key)) return ok_status();
  const json& v = j[key];
  if (v.is_null()) {
    out->reset();
    return ok_status();
  }
  if (!v.is_array()) return invalid_argument("gap_analysis.%s: expected a list of strings", key);
  std::vector<std::string> items;
  for (const auto& e : v) {
    auto s = json_as_string(e);
    if (!s) return invalid_argument("gap_analysis.%s: expected a list of strings", key);
    items.push_back(*s);
  }
  *out = std::move(items);
  return ok_status();
}

status read_number(const json& j, const char* key, double* out) {
  const json v = json_value(j, key);
  if (v.is_null()) return ok_status();
  auto d = json_as_number(v);
  if (!d) return invalid_argument("gap_analysis.%s: expected a number", key);
  *out = *d;
  return ok_status();
}

status read_bool(const json& j, const char* key, bool* out) {
  const json v = json_value(j, key);
  if (v.is_null()) return ok_status();
  auto b = json_as_bool(v);
  if (!b) return invalid_argument("gap_analysis.%s: expected true or false", key);
  *out = *b;
  return ok_status();
}

}  // namespace

json gap_config_json(const gap_config& c) {
  json j;
  j["enabled"] = c.enabled;
  j["trace_start_pct"] = c.trace_start_pct;
  j["trace_end_pct"] = c.trace_end_pct;
  j["top_k"] = c.top_k;
  j["min_duration_us"] = c.min_duration_us;
  j["categories"] = optional_list(c.categories);
  j["ignore_categories"] = optional_list(c.ignore_categories);
  j["find_kernel_sources"] = c.find_kernel_sources;
  j["kernel_source_repos"] = optional_list(c.kernel_source_repos);
  j["auto_clone_repos"] = c.auto_clone_repos;
  j["repos_base_dir"] = c.repos_base_dir ? json(*c.repos_base_dir) : json(nullptr);
  return j;
}

status_or<gap_config> decode_gap_config(const json& j) {
  gap_config c;
  if (!j.is_object()) return invalid_argument("gap_analysis: expected a mapping");
  MAGPIE_RETURN_IF_ERROR(read_bool(j, "enabled", &c.enabled));
  MAGPIE_RETURN_IF_ERROR(read_number(j, "trace_start_pct", &c.trace_start_pct));
  MAGPIE_RETURN_IF_ERROR(read_number(j, "trace_end_pct", &c.trace_end_pct));
  double top_k = c.top_k;
  MAGPIE_RETURN_IF_ERROR(read_number(j, "top_k", &top_k));
  if (top_k != static_cast<double>(static_cast<int>(top_k))) return invalid_argument("gap_analysis.top_k: expected an integer");
  c.top_k = static_cast<int>(top_k);
  MAGPIE_RETURN_IF_ERROR(read_number(j, "min_duration_us", &c.min_duration_us));
  MAGPIE_RETURN_IF_ERROR(read_optional_list(j, "categories", &c.categories));
  MAGPIE_RETURN_IF_ERROR(read_optional_list(j, "ignore_categories", &c.ignore_categories));
  MAGPIE_RETURN_IF_ERROR(read_bool(j, "find_kernel_sources", &c.find_kernel_sources));
  MAGPIE_RETURN_IF_ERROR(read_optional_list(j, "kernel_source_repos", &c.kernel_source_repos));
  std::optional<std::vector<std::string>> rank_files;
  MAGPIE_RETURN_IF_ERROR(read_optional_list(j, "rank_files", &rank_files));
  if (rank_files) c.rank_files = *rank_files;
  MAGPIE_RETURN_IF_ERROR(read_bool(j, "auto_clone_repos", &c.auto_clone_repos));
  if (auto dir = json_as_string(json_value(j, "repos_base_dir"))) c.repos_base_dir = *dir;
  static const char* k_known[] = {"enabled", "trace_start_pct", "trace_end_pct", "top_k", "min_duration_us",
                                  "categories", "ignore_categories", "find_kernel_sources",
                                  "kernel_source_repos", "auto_clone_repos", "repos_base_dir", "rank_files"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::find_if(std::begin(k_known), std::end(k_known), [&](const char* k) { return it.key() == k; }) ==
        std::end(k_known))
      return invalid_argument("gap_analysis: unknown field '%s'", it.key().c_str());
  }
  MAGPIE_RETURN_IF_ERROR(c.validate());
  return c;
}

}  // namespace magpie::trace
