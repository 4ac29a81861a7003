#include "gpu/specs.h"

#include <cstdlib>

#include "core/strings.h"
#include "gpu/specs_codec.h"

namespace magpie::gpu {
namespace {
/// Size bound of a GPU spec table or arch JSON (the shipped table is a few KB).
constexpr size_t k_max_spec_file_bytes = 16u << 20;
}  // namespace

std::optional<double> gpu_spec::peak_tflops(const std::string& compute_spec) const {
  auto it = tflops.find(compute_spec);
  if (it == tflops.end() || !(it->second > 0)) return std::nullopt;
  return it->second;
}

namespace {

status parse_ceilings(const json& j, const std::string& where, gpu_spec* out) {
  if (j.is_null()) return ok_status();
  if (!j.is_object()) return invalid_argument("%s: expected an object", where.c_str());
  if (const json* bw = json_member(j, "mem_bw_gbps")) {
    auto v = json_as_number(*bw);
    if (!v) return invalid_argument("%s.mem_bw_gbps: expected a number (GB/s)", where.c_str());
    out->mem_bw_gbps = *v;
  }
  if (auto v = json_as_number(json_value(j, "memory_gb"))) out->memory_gb = *v;
  if (j.contains("max_achievable_tflops")) {
    const json& t = j["max_achievable_tflops"];
    if (!t.is_object()) return invalid_argument("%s.max_achievable_tflops: expected an object", where.c_str());
    for (auto it = t.begin(); it != t.end(); ++it) {
      auto v = json_as_number(it.value());
      if (!v) return invalid_argument("%s.max_achievable_tflops.%s: expected a number (TFLOP/s)", where.c_str(), it.key().c_str());
      out->tflops[it.key()] = *v;
    }
  }
  return ok_status();
}

std::vector<std::string> string_list(const json& j) {
  std::vector<std::string> v;
  if (j.is_array())
    for (const auto& e : j)
      if (auto s = json_as_string(e)) v.push_back(*s);
  return v;
}

std::string squash(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' || c == '-' || c == '_') continue;
    out.push_back(static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c));
  }
  return out;
}

}  // namespace

status_or<std::vector<spec_entry>> parse_spec_table(const json& doc, const std::string& what) {
  if (!doc.is_object() || !doc.contains("gpus") || !doc["gpus"].is_array())
    return invalid_argument("%s: expected an object with a \"gpus\" list", what.c_str());
  std::vector<spec_entry> out;
  size_t i = 0;
  for (const auto& g : doc["gpus"]) {
    std::string where = strprintf("%s: gpus[%zu]", what.c_str(), i++);
    auto name = json_as_string(json_value(g, "name"));
    if (!name) return invalid_argument("%s: expected an object with a string \"name\"", where.c_str());
    spec_entry e;
    e.name = *name;
    e.vendor = json_string(g, "vendor");
    e.reference = json_string(g, "_reference");
    e.aliases = string_list(json_value(g, "aliases"));
    e.exclude = string_list(json_value(g, "exclude"));
    if (e.aliases.empty()) e.aliases.push_back(e.name);
    e.memory_gb = json_number(g, "memory_gb", 0);
    MAGPIE_RETURN_IF_ERROR(parse_ceilings(json_value(g, "datasheet"), where + ".datasheet", &e.datasheet));
    MAGPIE_RETURN_IF_ERROR(parse_ceilings(json_value(g, "achievable"), where + ".achievable", &e.achievable));
    out.push_back(std::move(e));
  }
  return out;
}

status_or<std::vector<spec_entry>> load_spec_table(const fs::path& file) {
  MAGPIE_ASSIGN_OR_RETURN(json doc, read_json_file(file, k_max_spec_file_bytes));
  return parse_spec_table(doc, file.string());
}

fs::path default_spec_table_path() {
  std::vector<fs::path> cands;
  if (const char* d = std::getenv("MAGPIE_DATA_DIR"); d && *d) cands.push_back(fs::path(d) / "gpu_specs.json");
  fs::path exe = executable_dir();
  cands.push_back(exe / "data/gpu_specs.json");
  cands.push_back(exe / "../data/gpu_specs.json");
  cands.push_back(exe / "../share/magpie/data/gpu_specs.json");
  std::error_code ec;
  for (const auto& c : cands)
    if (fs::is_regular_file(c, ec)) return fs::weakly_canonical(c, ec);
  return {};
}

status_or<std::vector<spec_entry>> load_default_spec_table() {
  fs::path p = default_spec_table_path();
  if (p.empty())
    return not_found("GPU spec table data/gpu_specs.json not found next to the binary (set MAGPIE_DATA_DIR)");
  return load_spec_table(p);
}

const spec_entry* match_spec(const std::vector<spec_entry>& table, std::string_view device_name) {
  std::string dev = squash(device_name);
  if (dev.empty()) return nullptr;
  const spec_entry* best = nullptr;
  size_t best_len = 0;
  for (const auto& e : table) {
    bool excluded = false;
    for (const auto& x : e.exclude)
      if (!x.empty() && contains(dev, squash(x))) excluded = true;
    if (excluded) continue;
    for (const auto& a : e.aliases) {
      std::string s = squash(a);
      if (!s.empty() && contains(dev, s) && s.size() > best_len) {
        best = &e;
        best_len = s.size();
      }
    }
  }
  return best;
}

gpu_spec resolve_spec(const spec_entry& e, bool use_achievable) {
  gpu_spec s = e.datasheet;
  s.name = e.name;
  s.memory_gb = e.memory_gb;
  s.reference = e.reference;
  s.source = use_achievable ? "achievable" : "datasheet";
  s.key_source["mem_bw_gbps"] = "datasheet";
  for (const auto& [k, v] : s.tflops) s.key_source[k] = "datasheet";
  if (use_achievable) {
    if (e.achievable.mem_bw_gbps > 0) {
      s.mem_bw_gbps = e.achievable.mem_bw_gbps;
      s.key_source["mem_bw_gbps"] = "achievable";
    }
    for (const auto& [k, v] : e.achievable.tflops) {
      s.tflops[k] = v;
      s.key_source[k] = "achievable";
    }
  }
  return s;
}

status_or<gpu_spec> load_arch_json(const fs::path& file) {
  MAGPIE_ASSIGN_OR_RETURN(json doc, read_json_file(file, k_max_spec_file_bytes));
  if (!doc.is_object()) return invalid_argument("%s: expected a TraceLens arch object", file.c_str());
  gpu_spec s;
  MAGPIE_RETURN_IF_ERROR(parse_ceilings(doc, file.string(), &s));
  s.name = json_string(doc, "name", file.stem().string());
  s.reference = json_string(doc, "_reference");
  s.source = file.string();
  if (!(s.mem_bw_gbps > 0) && s.tflops.empty())
    return invalid_argument("%s: neither mem_bw_gbps nor max_achievable_tflops is given", file.c_str());
  return s;
}

}  // namespace magpie::gpu
