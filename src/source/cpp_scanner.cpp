// C++/CUDA/HIP scanner for __global__ function definitions (see repo_index.h). Pass 1
// (cpp_lexer) blanks non-code and lists conditional directives and kernel macros; pass 2 walks
// identifiers, tracking namespaces by braces. Each #elif/#else branch starts from the brace
// state at its #if, and after #endif the state of the first live branch continues (code
// duplicated under #if/#else does not unbalance the namespace stack).
#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <unordered_map>

#include "core/strings.h"
#include "source/cpp_lexer.h"
#include "source/kernel_name.h"
#include "source/repo_index.h"
#include "source/signature.h"

namespace magpie::source {
namespace {

struct line_map {
  std::vector<size_t> starts{0};
  explicit line_map(std::string_view t) {
    for (size_t i = 0; i < t.size(); ++i)
      if (t[i] == '\n') starts.push_back(i + 1);
  }
  int line_of(size_t off) const {
    return static_cast<int>(std::upper_bound(starts.begin(), starts.end(), off) - starts.begin());
  }
  std::string_view line_text(std::string_view t, int line) const {
    size_t b = starts[line - 1];
    size_t e = static_cast<size_t>(line) < starts.size() ? starts[line] - 1 : t.size();
    return t.substr(b, e - b);
  }
};

std::string collapse_spaces(std::string_view s) {
  std::string out;
  for (char c : trim(s)) {
    bool sp = std::isspace(static_cast<unsigned char>(c));
    if (sp && (out.empty() || out.back() == ' ')) continue;
    out += sp ? ' ' : c;
  }
  return out;
}

/// One #if … #endif group: the offsets of the directives opening each branch.
struct cond_group {
  std::vector<size_t> starts;  ///< #if, then each #elif / #else
  std::vector<bool> dead;
  size_t end = std::string_view::npos;  ///< offset of #endif (npos when unterminated)
};

std::vector<cond_group> group_conditionals(const std::vector<pp_directive>& ds) {
  std::vector<cond_group> out;
  std::vector<size_t> open;
  for (const auto& d : ds) {
    if (d.k == pp_directive::kind::if_) {
      open.push_back(out.size());
      out.push_back({{d.offset}, {d.dead}, std::string_view::npos});
    } else if (!open.empty() && d.k == pp_directive::kind::endif) {
      out[open.back()].end = d.offset;
      open.pop_back();
    } else if (!open.empty()) {
      out[open.back()].starts.push_back(d.offset);
      out[open.back()].dead.push_back(d.dead);
    }
  }
  return out;
}

/// code[p, p+len) with, in every #if group that has alternatives, all branches blanked but one:
/// the branch containing `p`, or (for groups after `p`) the first live branch. A declaration
/// whose name or parameters differ between #if and #else then reads as one declaration.
std::string one_branch_view(std::string_view code, const std::vector<cond_group>& groups, size_t p, size_t len) {
  size_t e = std::min(code.size(), p + len);
  std::string v(code.substr(p, e - p));
  for (const auto& g : groups) {
    size_t gend = std::min(g.end, code.size());
    if (g.starts.size() < 2 || gend <= p || g.starts[0] >= e) continue;
    auto branch_end = [&](size_t b) { return b + 1 < g.starts.size() ? g.starts[b + 1] : gend; };
    size_t keep = std::string_view::npos;
    for (size_t b = 0; b < g.starts.size() && keep == std::string_view::npos; ++b)
      if (p >= g.starts[b] && p < branch_end(b)) keep = b;
    if (keep == std::string_view::npos && g.starts[0] < p) continue;
    for (size_t b = 0; b < g.starts.size() && keep == std::string_view::npos; ++b)
      if (!g.dead[b]) keep = b;
    for (size_t b = 0; b < g.starts.size(); ++b) {
      if (b == keep) continue;
      for (size_t i = std::max(g.starts[b], p); i < std::min(branch_end(b), e); ++i)
        if (v[i - p] != '\n') v[i - p] = ' ';
    }
  }
  return v;
}

/// What one walk over a file collects.
struct scan_options {
  bool kernels = false;                               ///< __global__ declarations
  const std::set<std::string>* names = nullptr;       ///< host functions / classes with these names
  const std::vector<kernel_macro>* macros = nullptr;  ///< expand invocations of these (nullptr: the file's own)
};

struct scan_context {
  std::string_view text, code;
  const line_map& lines;
  const std::vector<std::string>* scopes;  ///< enclosing namespaces at the current offset
  const std::vector<cond_group>* groups;
  std::vector<kernel_definition>* out;

  kernel_definition at(size_t w0) const {
    kernel_definition d;
    d.scopes = *scopes;
    d.line = lines.line_of(w0);
    d.snippet = std::string(trim(lines.line_text(text, d.line)).substr(0, 200));
    return d;
  }
};

/// The template-parameter shape of the declaration whose `__global__` is at `at_global`: the
/// `template <…>` head between the previous ';', '{' or '}' and it ("" for none). False when a
/// head is there but cannot be read.
bool template_head_shape(std::string_view code, size_t at_global, std::string* shape) {
  size_t b = at_global;
  for (size_t steps = 0; b > 0 && steps < 8192; --b, ++steps) {
    char c = code[b - 1];
    if (c == ';' || c == '{' || c == '}') break;
  }
  std::string_view seg = code.substr(b, at_global - b);
  shape->clear();
  for (size_t p = 0; (p = seg.find("template", p)) != std::string_view::npos; p += 8) {
    if ((p > 0 && ident_char(seg[p - 1])) || (p + 8 < seg.size() && ident_char(seg[p + 8]))) continue;
    size_t lt = skip_ws(seg, p + 8);
    if (lt >= seg.size() || seg[lt] != '<') return false;
    size_t e = skip_template_args(seg, lt, seg.size());
    if (e == std::string_view::npos) return false;
    *shape = decl_template_shape(seg.substr(lt + 1, e - lt - 2));
    return true;
  }
  return true;
}

/// Shape of explicit specialisation arguments `name<float, 4>(`: literals are values, any other
/// spelling ('?') may be a type or a named constant.
std::string explicit_args_shape(std::string_view args) {
  std::string s;
  for (const auto& a : split_top_level(args, ',')) {
    std::string one = trace_template_shape({a});
    s += (!a.empty() && (std::isdigit(static_cast<unsigned char>(a[0])) || a == "true" || a == "false")) ? one : "?";
  }
  return s;
}

/// Parameter count and shape of the list code[open, close), then definition vs declaration and
/// the body hash. False when a parameter is a bare all-caps word (a macro that may expand to
/// several parameters): the shape is then not known.
bool read_parameters_and_body(std::string_view code, size_t open, size_t close, kernel_definition* d) {
  auto params = split_top_level(code.substr(open + 1, close - open - 2), ',');
  bool macro_param = false;
  for (const auto& p : params)
    macro_param = macro_param || (p.size() > 1 && is_identifier(p) && to_lower(p) != p &&
                                  std::none_of(p.begin(), p.end(), [](char c) { return std::islower(c) != 0; }));
  d->param_count =
      (params.size() == 1 && (params[0].empty() || params[0] == "void")) ? 0 : static_cast<int>(params.size());
  d->param_shape = decl_param_shape(params);
  size_t brace = code.find_first_of("{;", close);
  d->is_definition = brace != std::string_view::npos && code[brace] == '{';
  if (d->is_definition) {
    size_t end = skip_group(code, brace, code.size());
    d->body_hash = fnv1a_nonspace(code.substr(brace, (end == std::string_view::npos ? code.size() : end) - brace));
  }
  return !macro_param;
}

/// Parses the declarator after a `__global__` token at `at_global` (in one #if branch, see
/// one_branch_view); appends a declaration on success.
void parse_kernel_after_global(const scan_context& cx, size_t at_global) {
  const std::string view = one_branch_view(cx.code, *cx.groups, at_global, size_t{1} << 17);
  std::string_view code = view;
  size_t p = 0;
  const size_t ret_begin = p;
  std::vector<std::string> qual;
  size_t chain_start = p;
  std::string explicit_shape;
  bool explicit_spec = false;
  for (int tokens = 0; tokens < 64; ++tokens) {
    p = skip_ws(code, p);
    if (p >= code.size()) return;
    char c = code[p];
    if (c == '*' || c == '&') { ++p; continue; }
    if (c == '(') {
      if ((p = skip_group(code, p, 4096)) == std::string_view::npos) return;
      continue;
    }
    if (!ident_start(c)) return;
    size_t w0 = p;
    while (p < code.size() && ident_char(code[p])) ++p;
    std::string_view w = code.substr(w0, p - w0);
    if (qual.empty()) chain_start = w0;
    size_t q = skip_ws(code, p);
    if (q < code.size() && code[q] == '<' && !is_decoration(w)) {
      size_t e = skip_template_args(code, q, 4096);
      if (e == std::string_view::npos) return;
      size_t r = skip_ws(code, e);
      if (r >= code.size() || code[r] != '(') {
        p = e;  // templated return type: std::enable_if_t<…>
      } else {  // explicit specialisation name<…>(
        explicit_spec = true;
        explicit_shape = explicit_args_shape(code.substr(q + 1, e - q - 2));
      }
      q = r;
    }
    if (q + 1 < code.size() && code[q] == ':' && code[q + 1] == ':') {
      qual.emplace_back(w);
      p = q + 2;
      continue;
    }
    if (q >= code.size() || code[q] != '(') { qual.clear(); continue; }
    size_t close = skip_group(code, q, 1 << 16);
    if (close == std::string_view::npos) return;
    size_t after = skip_ws(code, close);
    bool named_like_macro = after < code.size() && (code[after] == '{' || code[after] == ';');
    if (is_decoration(w) && !(named_like_macro && !starts_with(w, "__"))) {  // __launch_bounds__(…)
      p = close;
      continue;
    }
    kernel_definition d = cx.at(at_global + w0);
    d.symbol = std::string(w);
    for (auto& s : qual) d.scopes.push_back(s);
    bool params_known = read_parameters_and_body(code, q, close, &d);
    d.shape_known = template_head_shape(cx.code, at_global, &d.template_shape) && params_known;
    if (explicit_spec) d.template_shape = explicit_shape;
    d.return_type = collapse_spaces(code.substr(ret_begin, std::min<size_t>(chain_start - ret_begin, 512)));
    cx.out->push_back(std::move(d));
    return;
  }
}

/// After the `namespace` keyword at `p`: the names (empty for an anonymous namespace) and the
/// offset of its '{', or npos when this is an alias / using-directive.
size_t parse_namespace_head(std::string_view code, size_t p, std::vector<std::string>* names) {
  for (int tokens = 0; tokens < 32; ++tokens) {
    p = skip_ws(code, p);
    if (p >= code.size()) return std::string_view::npos;
    if (code[p] == '{') return p;
    if (code[p] == ':' && p + 1 < code.size() && code[p + 1] == ':') { p += 2; continue; }
    if (!ident_start(code[p])) return std::string_view::npos;
    size_t w0 = p;
    while (p < code.size() && ident_char(code[p])) ++p;
    std::string_view w = code.substr(w0, p - w0);
    if (w != "inline") names->emplace_back(w);
  }
  return std::string_view::npos;
}

bool member_or_qualified_use(std::string_view code, size_t w0) {
  size_t b = w0;
  while (b > 0 && std::isspace(static_cast<unsigned char>(code[b - 1]))) --b;
  return b > 0 && (code[b - 1] == '.' || code[b - 1] == '>' || code[b - 1] == ':');
}

/// Host function or struct/class definition of the word at code[w0, w1)? A function needs
/// "name(…) [qualifiers] {"; a class "struct|class name [<…>] [final] {|:".
void match_named_definition(const scan_context& cx, size_t w0, size_t w1) {
  std::string_view code = cx.code;
  size_t p = skip_ws(code, w1);
  size_t b = w0;
  while (b > 0 && std::isspace(static_cast<unsigned char>(code[b - 1]))) --b;
  bool after_class = (b >= 6 && code.substr(b - 6, 6) == "struct") || (b >= 5 && code.substr(b - 5, 5) == "class");
  if (member_or_qualified_use(code, w0)) return;
  if (p < code.size() && code[p] == '<') {
    size_t e = skip_template_args(code, p, 1024);
    if (e == std::string_view::npos) return;
    p = skip_ws(code, e);
  }
  kernel_definition d = cx.at(w0);
  if (after_class) {
    if (p + 5 <= code.size() && code.substr(p, 5) == "final") p = skip_ws(code, p + 5);
    if (p >= code.size() || (code[p] != '{' && !(code[p] == ':' && (p + 1 >= code.size() || code[p + 1] != ':')))) return;
    d.decorators = "class";
  } else {
    if (p >= code.size() || code[p] != '(') return;
    size_t close = skip_group(code, p, 1 << 16);
    if (close == std::string_view::npos) return;
    p = skip_ws(code, close);
    for (std::string_view q : {"const", "noexcept", "override", "final", "mutable"}) {
      if (code.substr(p, q.size()) == q) p = skip_ws(code, p + q.size());
    }
    if (p >= code.size() || code[p] != '{') return;
    d.decorators = "function";
  }
  d.symbol = std::string(code.substr(w0, w1 - w0));
  cx.out->push_back(std::move(d));
}

/// An invocation `MACRO(args)` of kernel macro `m` (index `ref`) at code[w0, w1): the kernel it
/// defines. Returns the offset to continue from.
size_t expand_invocation(const scan_context& cx, const kernel_macro& m, size_t ref, size_t w0, size_t w1) {
  std::string_view code = cx.code;
  size_t q = skip_ws(code, w1);
  if (q >= code.size() || code[q] != '(' || member_or_qualified_use(code, w0)) return w1;
  size_t close = skip_group(code, q, 1 << 16);
  if (close == std::string_view::npos) return w1;
  std::string name = expand_kernel_name(m, split_top_level(code.substr(q + 1, close - q - 2), ','));
  if (name.empty()) return w1;
  kernel_definition d = cx.at(w0);
  d.symbol = std::move(name);
  d.param_count = m.param_count;
  d.is_definition = m.defines_body;
  d.body_hash = fnv1a_nonspace(code.substr(w0, close - w0));
  d.macro = m.name;
  d.macro_line = m.line;
  d.macro_ref = ref;
  cx.out->push_back(std::move(d));
  return close;
}

struct brace_state {
  std::vector<std::string> scopes;
  std::vector<size_t> pushed;  ///< per open brace: how many scope names it added
};

struct cond_state {
  brace_state at_if;
  std::optional<brace_state> chosen;  ///< end state of the first live branch
  bool dead = false;
};

void apply_directive(const pp_directive& d, brace_state& st, std::vector<cond_state>& conds) {
  using k = pp_directive::kind;
  if (d.k == k::if_) {
    conds.push_back({st, std::nullopt, d.dead});
    return;
  }
  if (conds.empty()) return;
  cond_state& c = conds.back();
  if (!c.chosen && !c.dead) c.chosen = st;
  if (d.k == k::endif) {
    if (c.chosen) st = std::move(*c.chosen);
    conds.pop_back();
    return;
  }
  st = c.at_if;
  c.dead = d.dead;
}

void scan_cpp(std::string_view text, const scan_options& o, std::vector<kernel_definition>* out) {
  lexed_cpp lx = lex_cpp(text);
  line_map lines(text);
  const std::vector<kernel_macro>* macros = o.macros ? o.macros : (o.kernels ? &lx.macros : nullptr);
  std::unordered_map<std::string_view, size_t> macro_by_name;
  if (macros)
    for (size_t k = 0; k < macros->size(); ++k) macro_by_name.emplace((*macros)[k].name, k);
  brace_state st;
  std::vector<cond_state> conds;
  size_t next_dir = 0;
  std::vector<cond_group> groups = group_conditionals(lx.conditionals);
  scan_context cx{text, lx.code, lines, &st.scopes, &groups, out};
  std::string_view code = lx.code;
  for (size_t i = 0; i < code.size();) {
    while (next_dir < lx.conditionals.size() && lx.conditionals[next_dir].offset <= i)
      apply_directive(lx.conditionals[next_dir++], st, conds);
    char c = code[i];
    if (c == '{') { st.pushed.push_back(0); ++i; continue; }
    if (c == '}') {
      if (!st.pushed.empty()) {
        for (size_t k = 0; k < st.pushed.back() && !st.scopes.empty(); ++k) st.scopes.pop_back();
        st.pushed.pop_back();
      }
      ++i;
      continue;
    }
    if (!ident_start(c) || (i > 0 && ident_char(code[i - 1]))) { ++i; continue; }
    size_t w0 = i;
    while (i < code.size() && ident_char(code[i])) ++i;
    std::string_view w = code.substr(w0, i - w0);
    if (w == "namespace") {
      std::vector<std::string> ns;
      size_t brace = parse_namespace_head(code, i, &ns);
      if (brace == std::string_view::npos) continue;
      if (ns.empty()) ns.emplace_back("(anonymous namespace)");
      for (auto& n : ns) st.scopes.push_back(n);
      st.pushed.push_back(ns.size());
      i = brace + 1;
    } else if (o.kernels && w == "__global__") {
      parse_kernel_after_global(cx, i);
    } else if (o.names != nullptr && o.names->count(std::string(w))) {
      match_named_definition(cx, w0, i);
    } else if (auto it = macro_by_name.find(w); it != macro_by_name.end()) {
      i = expand_invocation(cx, (*macros)[it->second], it->second, w0, i);
    }
  }
}

}  // namespace

void scan_cpp_source(std::string_view text, std::vector<kernel_definition>* out) {
  scan_options o;
  o.kernels = true;
  scan_cpp(text, o, out);
}

void scan_cpp_named(std::string_view text, const std::set<std::string>& names, std::vector<kernel_definition>* out) {
  scan_options o;
  o.names = &names;
  scan_cpp(text, o, out);
}

void scan_cpp_macro_uses(std::string_view text, const std::vector<kernel_macro>& macros,
                         std::vector<kernel_definition>* out) {
  scan_options o;
  o.macros = &macros;
  scan_cpp(text, o, out);
}

std::vector<kernel_macro> scan_cpp_kernel_macros(std::string_view text) { return lex_cpp(text).macros; }

}  // namespace magpie::source
