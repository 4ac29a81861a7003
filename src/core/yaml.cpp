// Adapter for yaml-cpp: exceptions stop here and become status values.
#include "core/yaml.h"

#include <yaml-cpp/yaml.h>

#include "core/env.h"
#include "core/strings.h"

namespace magpie {
namespace {

config_node convert(const YAML::Node& n, const std::string& file, const yaml_options& opts) {
  config_node out;
  out.file = file;
  YAML::Mark m = n.Mark();
  if (m.line >= 0) {
    out.line = m.line + 1;
    out.column = m.column + 1;
  }
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      out.type = config_node::kind::scalar;
      out.text = opts.expand_env ? expand_vars(n.Scalar()) : n.Scalar();
      out.quoted = n.Tag() == "!";
      break;
    case YAML::NodeType::Sequence:
      out.type = config_node::kind::sequence;
      for (const auto& item : n) out.items.push_back(convert(item, file, opts));
      break;
    case YAML::NodeType::Map:
      out.type = config_node::kind::map;
      for (const auto& kv : n) {
        std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("<complex key>");
        config_node value = convert(kv.second, file, opts);
        if (value.line == 0) {  // null values carry no mark: use the key's
          YAML::Mark km = kv.first.Mark();
          value.line = km.line + 1;
          value.column = km.column + 1;
        }
        out.entries.push_back(config_entry{key, std::move(value)});
      }
      break;
    default:
      out.type = config_node::kind::null;
  }
  return out;
}

json scalar_to_json(const config_node& n) {
  if (n.quoted) return n.text;
  const std::string& t = n.text;
  if (t == "~" || t == "null" || t == "Null" || t == "NULL" || t.empty()) return nullptr;
  if (t == "true" || t == "True" || t == "TRUE") return true;
  if (t == "false" || t == "False" || t == "FALSE") return false;
  if (auto i = parse_int(t)) {
    if (t.find_first_of(".eE") == std::string::npos) return *i;
  }
  if (t.find_first_not_of("0123456789+-.eE") == std::string::npos) {
    if (auto d = parse_double(t)) return *d;
  }
  if (t == ".inf" || t == ".Inf") return nullptr;  // JSON cannot carry infinities
  return t;
}

void emit(YAML::Emitter& e, const json& v) {
  if (v.is_object()) {
    e << YAML::BeginMap;
    for (auto it = v.begin(); it != v.end(); ++it) {
      e << YAML::Key << it.key() << YAML::Value;
      emit(e, it.value());
    }
    e << YAML::EndMap;
  } else if (v.is_array()) {
    e << YAML::BeginSeq;
    for (const auto& x : v) emit(e, x);
    e << YAML::EndSeq;
  } else if (v.is_null()) {
    e << YAML::Null;
  } else if (v.is_string()) {
    e << v.get<std::string>();
  } else if (v.is_boolean()) {
    e << v.get<bool>();
  } else if (v.is_number_integer()) {
    e << v.get<int64_t>();
  } else {
    e << v.get<double>();
  }
}

}  // namespace

const config_node* config_node::get(const std::string& key) const {
  if (type != kind::map) return nullptr;
  for (const auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}

std::string config_node::where() const {
  if (line <= 0) return file;
  return strprintf("%s:%d:%d", file.c_str(), line, column);
}

json config_node::to_json() const {
  switch (type) {
    case kind::null: return nullptr;
    case kind::scalar: return scalar_to_json(*this);
    case kind::sequence: {
      json a = json::array();
      for (const auto& i : items) a.push_back(i.to_json());
      return a;
    }
    case kind::map: {
      json o = json::object();
      for (const auto& [k, v] : entries) o[k] = v.to_json();
      return o;
    }
  }
  return nullptr;
}

status_or<config_node> parse_yaml(const std::string& text, const std::string& file_name, const yaml_options& opts) {
  try {
    YAML::Node root = YAML::Load(text);
    return convert(root, file_name, opts);
  } catch (const YAML::Exception& e) {
    return parse_error("%s:%d:%d: invalid YAML: %s", file_name.c_str(), e.mark.line + 1, e.mark.column + 1,
                       e.msg.c_str());
  }
}

status_or<config_node> load_yaml_file(const fs::path& path, const yaml_options& opts) {
  MAGPIE_ASSIGN_OR_RETURN(std::string text, read_file(path));
  return parse_yaml(text, path.string(), opts);
}

std::string json_to_yaml(const json& value) {
  try {
    YAML::Emitter e;
    emit(e, value);
    return std::string(e.c_str()) + "\n";
  } catch (const YAML::Exception&) {
    return dump_pretty(value);  // JSON is valid YAML
  }
}

}  // namespace magpie
