// TargetedKernelTrace format: canonical JSON, hashing, sampling, envelopes, target configs
// (see kernel_trace_shards_codec.h and kernel_trace_shards.h).
#include <fnmatch.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <ctime>

#include "core/config.h"
#include "core/strings.h"
#include "serve/sha256.h"
#include "serve/kernel_trace_shards_codec.h"

namespace magpie::serve::targeted {
namespace {

void append_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) out += strprintf("\\u%04x", c);
        else out += static_cast<char>(c);
    }
  }
  out += '"';
}

status append_value(std::string& out, const json& v) {
  switch (v.type()) {
    case json::value_t::null: out += "null"; return ok_status();
    case json::value_t::boolean: out += json_as_bool(v).value_or(false) ? "true" : "false"; return ok_status();
    case json::value_t::number_integer: out += std::to_string(json_as_int(v).value_or(0)); return ok_status();
    case json::value_t::number_unsigned: out += std::to_string(json_as_uint(v).value_or(0)); return ok_status();
    case json::value_t::number_float: {
      double d = json_as_number(v).value_or(0);
      if (!std::isfinite(d)) return invalid_argument("non-finite number %g is not JSON (allow_nan=False)", d);
      out += python_float_repr(d);
      return ok_status();
    }
    case json::value_t::string: append_string(out, json_as_string(v).value_or("")); return ok_status();
    case json::value_t::array: {
      out += '[';
      for (size_t i = 0; i < v.size(); ++i) {
        if (i) out += ',';
        MAGPIE_RETURN_IF_ERROR(append_value(out, v[i]));
      }
      out += ']';
      return ok_status();
    }
    case json::value_t::object: {
      std::vector<std::string> keys;
      for (auto it = v.begin(); it != v.end(); ++it) keys.push_back(it.key());
      std::sort(keys.begin(), keys.end());  // UTF-8 byte order = code point order (Python's sort)
      out += '{';
      for (size_t i = 0; i < keys.size(); ++i) {
        if (i) out += ',';
        append_string(out, keys[i]);
        out += ':';
        MAGPIE_RETURN_IF_ERROR(append_value(out, v[keys[i]]));
      }
      out += '}';
      return ok_status();
    }
    default: return invalid_argument("value of type %s is not JSON", v.type_name());
  }
}

status append_pretty(std::string& out, const json& v, int depth) {
  std::string pad(static_cast<size_t>(2 * (depth + 1)), ' '), close_pad(static_cast<size_t>(2 * depth), ' ');
  if (v.is_array() && !v.empty()) {
    out += "[\n";
    for (size_t i = 0; i < v.size(); ++i) {
      out += pad;
      MAGPIE_RETURN_IF_ERROR(append_pretty(out, v[i], depth + 1));
      out += i + 1 < v.size() ? ",\n" : "\n";
    }
    out += close_pad + "]";
    return ok_status();
  }
  if (v.is_object() && !v.empty()) {
    std::vector<std::string> keys;
    for (auto it = v.begin(); it != v.end(); ++it) keys.push_back(it.key());
    std::sort(keys.begin(), keys.end());
    out += "{\n";
    for (size_t i = 0; i < keys.size(); ++i) {
      out += pad;
      append_string(out, keys[i]);
      out += ": ";
      MAGPIE_RETURN_IF_ERROR(append_pretty(out, v[keys[i]], depth + 1));
      out += i + 1 < keys.size() ? ",\n" : "\n";
    }
    out += close_pad + "}";
    return ok_status();
  }
  return append_value(out, v);
}

}  // namespace

status_or<std::string> python_pretty_json(const json& v) {
  std::string out;
  MAGPIE_RETURN_IF_ERROR(append_pretty(out, v, 0));
  return out;
}

std::string python_float_repr(double v) {
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // "-d.ddde+XX"
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  size_t e = sci.find('e');
  std::string mant = sci.substr(0, e);
  int exp10 = std::stoi(sci.substr(e + 1));
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  int decpt = exp10 + 1;  // value = 0.<digits> x 10^decpt
  std::string out;
  if (decpt > 16 || decpt < -3) {  // Python's repr switches to exponent form outside 1e-4 <= |v| < 1e16
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += strprintf("e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
  } else if (decpt <= 0) {
    out = "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
  } else if (static_cast<size_t>(decpt) >= digits.size()) {
    out = digits + std::string(static_cast<size_t>(decpt) - digits.size(), '0') + ".0";
  } else {
    out = digits.substr(0, static_cast<size_t>(decpt)) + "." + digits.substr(static_cast<size_t>(decpt));
  }
  return neg ? "-" + out : out;
}

status_or<std::string> canonical_json(const json& v) {
  std::string out;
  MAGPIE_RETURN_IF_ERROR(append_value(out, v));
  return out;
}

status_or<std::string> sha256_json(const json& v) {
  MAGPIE_ASSIGN_OR_RETURN(std::string text, canonical_json(v));
  return sha256_hex(text);
}

status_or<std::string> stable_key(const json& parts, int64_t occurrence) {
  if (occurrence < 0) return invalid_argument("occurrence must be non-negative");
  return sha256_json(json{{"parts", parts}, {"occurrence", occurrence}});
}

bool should_sample(const std::string& run_seed, const std::string& key, double sample_rate) {
  if (sample_rate <= 0) return false;
  if (sample_rate >= 1) return true;
  std::string hex = sha256_hex(run_seed + std::string(1, '\0') + key);
  uint64_t x = std::stoull(hex.substr(0, 16), nullptr, 16);
  return static_cast<double>(x) / 18446744073709551616.0 < sample_rate;
}

status_or<std::string> envelope_line(const std::string& record_type, int64_t sequence, const std::string& previous,
                                     const json& payload, std::string* checksum) {
  json body = {{"schema_name", k_schema_name}, {"schema_version", k_schema_version}, {"record_type", record_type},
               {"sequence", sequence}, {"previous_checksum", previous}, {"payload", payload}};
  MAGPIE_ASSIGN_OR_RETURN(*checksum, sha256_json(body));
  body["checksum"] = *checksum;
  MAGPIE_ASSIGN_OR_RETURN(std::string line, canonical_json(body));
  return line + "\n";
}

std::string counters_problem(const json& c) {
  for (const char* k : {"seen", "sampled", "written", "dropped"})
    if (!c.contains(k) || !c[k].is_number_integer() || json_as_int(c[k]).value_or(0) < 0)
      return "coverage counters must be non-negative integers";
  int64_t by_reason = 0, sampling = 0;
  if (c.contains("dropped_by_reason") && c["dropped_by_reason"].is_object())
    for (auto it = c["dropped_by_reason"].begin(); it != c["dropped_by_reason"].end(); ++it) {
      if (!it.value().is_number_integer()) return "dropped_by_reason values must be integers";
      by_reason += json_as_int(it.value()).value_or(0);
      if (it.key() == "sampling") sampling = json_as_int(it.value()).value_or(0);
    }
  int64_t seen = json_as_int(c["seen"]).value_or(0), sampled = json_as_int(c["sampled"]).value_or(0), written = json_as_int(c["written"]).value_or(0),
          dropped = json_as_int(c["dropped"]).value_or(0);
  if (by_reason != dropped) return "dropped_by_reason does not sum to dropped";
  if (seen != written + dropped) return "seen must equal written + dropped";
  if (sampled != written + dropped - sampling) return "sampled must equal written + non-sampling drops";
  return {};
}

std::string utc_now_micro() {
  auto now = std::chrono::system_clock::now();
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  std::time_t t = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return strprintf("%s.%06lldZ", buf, static_cast<long long>(us % 1000000));
}

bool target_spec::matches(const std::string& symbol) const {
  for (const auto& p : name_patterns)
    if (::fnmatch(p.c_str(), symbol.c_str(), FNM_NOESCAPE) == 0) return true;
  return false;
}

json target_spec_json(const target_spec& t) {
  return {{"target_id", t.target_id}, {"name_patterns", t.name_patterns}, {"variant_id", t.variant_id},
          {"package", t.package ? json(*t.package) : json(nullptr)}, {"source", t.source},
          {"source_hashes", t.source_hashes}, {"provenance_hashes", t.provenance_hashes}};
}

namespace {

status parse_target(const config_node& n, const std::string& field, target_spec* t) {
  if (!n.is_map()) return config_error(n, field, "expected a mapping (a target)");
  field_reader r(n, field);
  MAGPIE_RETURN_IF_ERROR(r.read_string(r.get("target_id") ? "target_id" : "id", &t->target_id));
  const char* pk = r.get("name_patterns") ? "name_patterns" : "names";
  if (const config_node* p = r.get(pk); p && p->is_scalar()) t->name_patterns = {p->text};
  else MAGPIE_RETURN_IF_ERROR(r.read_string_list(pk, &t->name_patterns));
  if (trim(t->target_id).empty()) return config_error(n, r.field("target_id"), "must be non-empty");
  if (t->name_patterns.empty()) return config_error(n, r.field("name_patterns"), "target '" + t->target_id + "' requires name_patterns");
  for (const auto& p : t->name_patterns)
    if (p.empty()) return config_error(*r.get(pk), r.field(pk), "patterns must be non-empty");
  MAGPIE_RETURN_IF_ERROR(r.read_string("variant_id", &t->variant_id));
  if (const config_node* pkg = r.get("package")) t->package = pkg->text;
  if (const config_node* src = r.get("source")) {
    if (!src->is_map()) return config_error(*src, r.field("source"), "expected {path, line, function, sha256}");
    field_reader s(*src, r.field("source"));
    std::string path, function, sha;
    int64_t line = 0;
    MAGPIE_RETURN_IF_ERROR(s.read_string("path", &path));
    MAGPIE_RETURN_IF_ERROR(s.read_int("line", &line));
    MAGPIE_RETURN_IF_ERROR(s.read_string("function", &function));
    MAGPIE_RETURN_IF_ERROR(s.read_string("sha256", &sha));
    MAGPIE_RETURN_IF_ERROR(s.check_unknown());
    if (path.empty()) return config_error(*src, s.field("path"), "must be a non-empty string");
    if (s.get("line") && line <= 0) return config_error(*s.get("line"), s.field("line"), "must be positive");
    t->source = {{"path", path}, {"line", s.get("line") ? json(line) : json(nullptr)},
                 {"function", s.get("function") ? json(function) : json(nullptr)},
                 {"sha256", sha.empty() ? json(nullptr) : json(sha)}};
  }
  for (auto [key, dst] : {std::pair{"source_hashes", &t->source_hashes}, {"provenance_hashes", &t->provenance_hashes}}) {
    env_list m;
    MAGPIE_RETURN_IF_ERROR(r.read_string_map(key, &m));
    for (const auto& [k, v] : m) (*dst)[k] = v;
  }
  return r.check_unknown();
}

}  // namespace

status_or<target_config> load_target_config(const fs::path& path) {
  MAGPIE_ASSIGN_OR_RETURN(config_node root, load_yaml_file(path));
  if (!root.is_map()) return invalid_argument("%s: target config root must be a mapping", path.c_str());
  const config_node* tt = root.get("targeted_trace");
  const config_node& n = tt ? *tt : root;
  const std::string base = tt ? "targeted_trace" : "";
  auto fld = [&](const std::string& k) { return base.empty() ? k : base + "." + k; };
  if (!n.is_map()) return config_error(n, base, "targeted_trace config must be a mapping");
  field_reader r(n, base);
  target_config c;
  r.allow("enabled");  // forced on, as Magpie's CLI does
  std::string backend = "torch_profiler";
  MAGPIE_RETURN_IF_ERROR(r.read_string("backend", &backend));
  if (to_lower(std::string(trim(backend))) != "torch_profiler")
    return config_error(*r.get("backend"), fld("backend"), "unsupported targeted trace backend '" + backend + "'; use 'torch_profiler'");
  MAGPIE_RETURN_IF_ERROR(r.read_string("run_seed", &c.run_seed));
  MAGPIE_RETURN_IF_ERROR(r.read_double("sample_rate", &c.sample_rate));
  if (!(c.sample_rate >= 0 && c.sample_rate <= 1))
    return config_error(*r.get("sample_rate"), fld("sample_rate"), "must be between 0 and 1");
  MAGPIE_RETURN_IF_ERROR(r.read_int("max_records_per_shard", &c.max_records_per_shard));
  if (c.max_records_per_shard < 0)
    return config_error(*r.get("max_records_per_shard"), fld("max_records_per_shard"), "must be non-negative");
  if (const config_node* ts = r.get("targets")) {
    if (!ts->is_sequence()) return config_error(*ts, fld("targets"), "expected a list of targets");
    for (size_t i = 0; i < ts->items.size(); ++i) {
      target_spec t;
      MAGPIE_RETURN_IF_ERROR(parse_target(ts->items[i], fld(strprintf("targets[%zu]", i)), &t));
      c.targets.push_back(std::move(t));
    }
  }
  if (c.targets.empty()) return config_error(n, fld("targets"), "enabled targeted_trace requires at least one target");
  MAGPIE_RETURN_IF_ERROR(r.check_unknown());
  return c;
}

}  // namespace magpie::serve::targeted
