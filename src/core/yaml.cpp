// Adapter for yaml-cpp: exceptions stop here and become status values. Documents are built from
// yaml-cpp's event stream, not YAML::Load's node graph, so that depth, alias expansion, duplicate
// keys and unclosed quotes are checked before anything is copied or nested further.
#include "core/yaml_json.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/config.h"
#include "core/env.h"
#include "core/strings.h"

namespace magpie {
namespace {

/// Thrown by the builder to stop yaml-cpp at the offending event; caught in parse_yaml.
struct build_error {
  int line = 0, column = 0;  ///< 1-based
  std::string message;
};

/// Size of a built subtree: nodes, scalar bytes and height (a scalar has height 1).
struct subtree {
  size_t nodes = 1, bytes = 0, height = 1;
};

struct anchor_info {
  std::string name;
  bool open = true;  ///< the anchored collection is still being built
  config_node node;
  subtree size;
};

/// One open map or sequence.
struct frame {
  config_node node;
  subtree size;
  YAML::anchor_t anchor = 0;
  int block_indent = -1;  ///< 0-based column of the nearest enclosing block collection
  bool has_key = false, merge_key = false;
  std::string key;
  int key_line = 0, key_column = 0;
  std::unordered_map<std::string, int> key_lines;      ///< explicit keys → line
  std::vector<std::pair<size_t, config_node>> merges;  ///< (entry index, merged map or list of maps)
};

class tree_builder final : public YAML::EventHandler {
 public:
  tree_builder(const std::string& text, std::string file, const yaml_options& opts)
      : m_text(text), m_opts(opts), m_file(std::move(file)) {}

  config_node take_root() { return std::move(m_root); }

  void OnDocumentStart(const YAML::Mark& m) override {
    if (m_documents++ > 0)
      fail(m, "a second YAML document starts here: a config file holds exactly one (remove the '---' or split the file)");
  }
  void OnDocumentEnd() override {}
  void OnAnchor(const YAML::Mark&, const std::string& name) override { m_anchor_name = name; }

  void OnNull(const YAML::Mark& m, YAML::anchor_t anchor) override {
    config_node n = leaf(m, config_node::kind::null);
    add_leaf(m, std::move(n), anchor);
  }

  void OnScalar(const YAML::Mark& m, const std::string& tag, YAML::anchor_t anchor, const std::string& value) override {
    config_node n = leaf(m, config_node::kind::scalar);
    n.quoted = tag == "!" || tag == "tag:yaml.org,2002:str";
    if (tag == "!") check_quote(m);
    bool is_key = !m_stack.empty() && m_stack.back().node.is_map() && !m_stack.back().has_key;
    n.text = m_opts.expand_env && !is_key ? expand_vars(value) : value;
    add_leaf(m, std::move(n), anchor);
  }

  void OnAlias(const YAML::Mark& m, YAML::anchor_t id) override {
    auto it = m_anchors.find(id);
    if (it == m_anchors.end()) fail(m, "alias to an unknown anchor");
    const anchor_info& a = it->second;
    if (a.open) fail(m, "alias *" + a.name + " refers to a node that contains it (a recursive alias)");
    if (++m_aliases > m_opts.limits.max_aliases)
      fail(m, strprintf("more than %zu alias uses in one document", m_opts.limits.max_aliases));
    check_depth(m, a.size.height, "*" + a.name);
    charge(m, a.size.nodes, a.size.bytes);
    config_node copy = a.node;
    copy.line = m.line + 1;
    copy.column = m.column + 1;
    attach(std::move(copy), a.size);
  }

  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    open(m, config_node::kind::sequence, anchor, style);
  }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    open(m, config_node::kind::map, anchor, style);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapEnd() override { close(); }

 private:
  [[noreturn]] static void fail(int line, int column, std::string msg) { throw build_error{line, column, std::move(msg)}; }
  [[noreturn]] static void fail(const YAML::Mark& m, std::string msg) { fail(m.line + 1, m.column + 1, std::move(msg)); }

  config_node leaf(const YAML::Mark& m, config_node::kind k) {
    charge(m, 1, 0);
    check_depth(m, 1, "a value");
    config_node n;
    n.type = k;
    n.file = m_file;
    if (m.line >= 0) {
      n.line = m.line + 1;
      n.column = m.column + 1;
    }
    return n;
  }

  void charge(const YAML::Mark& m, size_t nodes, size_t bytes) {
    const yaml_limits& l = m_opts.limits;
    if (m_nodes + nodes > l.max_nodes)
      fail(m, strprintf("the document expands to more than %zu nodes (aliases count at their expanded size)", l.max_nodes));
    if (m_bytes + bytes > l.max_text_bytes)
      fail(m, strprintf("the document expands to more than %zu bytes of text (aliases count at their expanded size)",
                        l.max_text_bytes));
    m_nodes += nodes;
    m_bytes += bytes;
  }

  /// A node of `height` placed under the open collections must stay within max_depth.
  void check_depth(const YAML::Mark& m, size_t height, const std::string& what) {
    if (m_stack.size() + height > m_opts.limits.max_depth)
      fail(m, strprintf("%s nests deeper than %zu levels", what.c_str(), m_opts.limits.max_depth));
  }

  void add_leaf(const YAML::Mark& m, config_node&& n, YAML::anchor_t anchor) {
    subtree s;
    s.bytes = n.text.size();
    charge(m, 0, s.bytes);
    if (anchor != 0) remember(m, anchor, n, s);
    attach(std::move(n), s);
  }

  /// Keeps a copy of an anchored node (charged: it is memory like any other node).
  void remember(const YAML::Mark& m, YAML::anchor_t id, const config_node& n, const subtree& s) {
    charge(m, s.nodes, s.bytes);
    anchor_info& a = m_anchors[id];
    a.name = m_anchor_name;
    a.open = false;
    a.node = n;
    a.size = s;
  }

  void open(const YAML::Mark& m, config_node::kind k, YAML::anchor_t anchor, YAML::EmitterStyle::value style) {
    check_depth(m, 1, k == config_node::kind::map ? "a mapping" : "a sequence");
    charge(m, 1, 0);
    frame f;
    f.node.type = k;
    f.node.file = m_file;
    f.node.line = m.line + 1;
    f.node.column = m.column + 1;
    f.anchor = anchor;
    int parent_indent = m_stack.empty() ? -1 : m_stack.back().block_indent;
    f.block_indent = style == YAML::EmitterStyle::Flow ? parent_indent : m.column;
    if (anchor != 0) {
      anchor_info& a = m_anchors[anchor];
      a = anchor_info{};
      a.name = m_anchor_name;
    }
    m_stack.push_back(std::move(f));
  }

  void close() {
    frame f = std::move(m_stack.back());
    m_stack.pop_back();
    if (f.node.is_map()) apply_merges(f);
    if (f.anchor != 0) {
      YAML::Mark m;
      m.line = f.node.line - 1;
      m.column = f.node.column - 1;
      remember(m, f.anchor, f.node, f.size);
    }
    attach(std::move(f.node), f.size);
  }

  void attach(config_node&& n, const subtree& s) {
    if (m_stack.empty()) {
      m_root = std::move(n);
      return;
    }
    frame& f = m_stack.back();
    f.size.nodes += s.nodes;
    f.size.bytes += s.bytes;
    f.size.height = std::max(f.size.height, s.height + 1);
    if (f.node.is_sequence()) {
      f.node.items.push_back(std::move(n));
    } else if (!f.has_key) {
      take_key(f, n);
    } else {
      f.has_key = false;
      if (f.merge_key) return add_merge(f, std::move(n));
      if (n.line == 0) {  // no mark: use the key's
        n.line = f.key_line;
        n.column = f.key_column;
      }
      n.key_line = f.key_line;
      n.key_column = f.key_column;
      f.node.entries.push_back(config_entry{std::move(f.key), std::move(n)});
    }
  }

  void take_key(frame& f, const config_node& k) {
    if (k.is_null()) fail(k.line, k.column, "a mapping key is empty");
    if (!k.is_scalar()) fail(k.line, k.column, "a mapping key must be a plain string, not a mapping or a list");
    f.has_key = true;
    f.key = k.text;
    f.key_line = k.line;
    f.key_column = k.column;
    f.merge_key = k.text == "<<" && !k.quoted;
    if (f.merge_key) return;
    auto [it, fresh] = f.key_lines.emplace(k.text, k.line);
    if (!fresh)
      fail(k.line, k.column, strprintf("duplicate key '%s' (first at line %d)", k.text.c_str(), it->second));
  }

  void add_merge(frame& f, config_node&& v) {
    bool ok = v.is_map();
    if (v.is_sequence()) {
      ok = true;
      for (const auto& item : v.items) ok = ok && item.is_map();
    }
    if (!ok) fail(v.line, v.column, "merge key '<<' expects a mapping or a list of mappings (e.g. <<: *defaults)");
    f.merges.emplace_back(f.node.entries.size(), std::move(v));
  }

  /// Merged entries go where their '<<' stood; explicit keys win, then earlier merged maps.
  static void apply_merges(frame& f) {
    if (f.merges.empty()) return;
    std::unordered_set<std::string> seen;
    for (const auto& [k, line] : f.key_lines) seen.insert(k);
    std::vector<config_entry> out;
    auto merge_map = [&](config_node& src) {
      for (auto& e : src.entries)
        if (seen.insert(e.first).second) out.push_back(std::move(e));
    };
    auto& entries = f.node.entries;
    size_t mi = 0;
    for (size_t i = 0; i <= entries.size(); ++i) {
      for (; mi < f.merges.size() && f.merges[mi].first == i; ++mi) {
        config_node& src = f.merges[mi].second;
        if (src.is_map()) {
          merge_map(src);
        } else {
          for (auto& m : src.items) merge_map(m);
        }
      }
      if (i < entries.size()) out.push_back(std::move(entries[i]));
    }
    entries = std::move(out);
  }

  /// A quoted scalar must close before the end of the text, and its continuation lines must be
  /// indented more than the enclosing block collection (YAML 1.2 flow-line prefix). yaml-cpp
  /// accepts both mistakes, swallowing the rest of the file into the string.
  void check_quote(const YAML::Mark& m) const {
    const std::string& t = m_text;
    // yaml-cpp's positions do not count a UTF-8 byte-order mark.
    const size_t start = static_cast<size_t>(m.pos) + (t.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0);
    // UTF-16/32 input is transcoded by yaml-cpp: its positions are not offsets into `t`.
    const bool wide = t.size() >= 2 && (t[0] == '\0' || t[1] == '\0' || static_cast<unsigned char>(t[0]) >= 0xFE);
    if (m.pos < 0 || wide || start >= t.size()) return;
    const char q = t[start];
    if (q != '"' && q != '\'') return;
    const int indent_floor = m_stack.empty() ? -1 : m_stack.back().block_indent;
    const char* kind = q == '"' ? "double" : "single";
    int line = m.line + 1;
    for (size_t i = start + 1; i < t.size();) {
      char c = t[i];
      if (c == q) {
        if (q == '\'' && i + 1 < t.size() && t[i + 1] == '\'') {
          i += 2;
          continue;
        }
        return;
      }
      if (c == '\\' && q == '"' && i + 1 < t.size() && t[i + 1] != '\n') {
        i += 2;
        continue;
      }
      if (c != '\n') {
        ++i;
        continue;
      }
      ++line;
      size_t j = i + 1;
      while (j < t.size() && t[j] == ' ') ++j;
      int indent = static_cast<int>(j - i - 1);
      bool blank = j >= t.size() || t[j] == '\n' || t[j] == '\r';
      bool marker = indent == 0 && (t.compare(j, 3, "---") == 0 || t.compare(j, 3, "...") == 0) &&
                    (j + 3 >= t.size() || t[j + 3] == ' ' || t[j + 3] == '\n' || t[j + 3] == '\r');
      if (!blank && (indent <= indent_floor || marker))
        fail(line, indent + 1,
             strprintf("the %s-quoted string opened at line %d, column %d is not closed (this line is not indented "
                       "inside it: a closing quote is missing?)",
                       kind, m.line + 1, m.column + 1));
      i = j;
    }
    fail(m, strprintf("unclosed %s quote: the string opened here runs to the end of the file", kind));
  }

  const std::string& m_text;
  const yaml_options& m_opts;
  std::string m_file;
  std::vector<frame> m_stack;
  std::unordered_map<YAML::anchor_t, anchor_info> m_anchors;
  std::string m_anchor_name;
  config_node m_root;
  size_t m_nodes = 0, m_bytes = 0, m_aliases = 0;
  int m_documents = 0;
};

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
  } else if (auto s = json_as_string(v)) {
    e << *s;
  } else if (auto b = json_as_bool(v)) {
    e << *b;
  } else if (auto i = v.is_number_integer() ? json_as_int(v) : std::nullopt) {
    e << *i;
  } else if (v.is_number_unsigned()) {
    e << json_as_uint(v).value_or(0);
  } else {
    e << json_as_number(v).value_or(0);
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

json config_node_json(const config_node& n) {
  switch (n.type) {
    case config_node::kind::null: return nullptr;
    case config_node::kind::scalar: return scalar_to_json(n);
    case config_node::kind::sequence: {
      json a = json::array();
      for (const auto& i : n.items) a.push_back(config_node_json(i));
      return a;
    }
    case config_node::kind::map: {
      json o = json::object();
      for (const auto& [k, v] : n.entries) o[k] = config_node_json(v);
      return o;
    }
  }
  return nullptr;
}

status_or<config_node> parse_yaml(const std::string& text, const std::string& file_name, const yaml_options& opts) {
  if (text.size() > opts.limits.max_bytes)
    return parse_error("%s: the document is %zu bytes, over the %zu-byte limit", file_name.c_str(), text.size(),
                       opts.limits.max_bytes);
  tree_builder builder(text, file_name, opts);
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
    }
    return builder.take_root();
  } catch (const build_error& e) {
    return parse_error("%s:%d:%d: %s", file_name.c_str(), e.line, e.column, e.message.c_str());
  } catch (const YAML::Exception& e) {
    return parse_error("%s:%d:%d: invalid YAML: %s", file_name.c_str(), e.mark.line + 1, e.mark.column + 1,
                       e.msg.c_str());
  } catch (const std::exception& e) {
    return parse_error("%s: invalid YAML: %s", file_name.c_str(), e.what());
  }
}

status_or<config_node> load_yaml_file(const fs::path& path, const yaml_options& opts) {
  MAGPIE_ASSIGN_OR_RETURN(std::string text, read_input_file(path, opts.limits.max_bytes, "YAML config"));
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
