// C++/CUDA/HIP scanner for __global__ function definitions (see repo_index.h).
// Pass 1 blanks comments, string/char literals and preprocessor lines (newlines kept, so
// offsets map to the original lines); pass 2 walks identifiers, tracking namespaces by braces.
#include <algorithm>
#include <cctype>
#include <set>

#include "core/strings.h"
#include "source/kernel_name.h"
#include "source/repo_index.h"

namespace magpie::source {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }

void blank_until_newline(std::string_view t, std::string& out, size_t& i) {
  while (i < t.size() && t[i] != '\n') {
    if (t[i] == '\\' && i + 1 < t.size() && t[i + 1] == '\n') {
      out[i] = ' ';
      i += 2;  // continuation: the newline stays
      continue;
    }
    out[i++] = ' ';
  }
}

void blank_block_comment(std::string_view t, std::string& out, size_t& i) {
  out[i] = out[i + 1] = ' ';
  i += 2;
  while (i < t.size() && !(t[i] == '*' && i + 1 < t.size() && t[i + 1] == '/')) {
    if (t[i] != '\n') out[i] = ' ';
    ++i;
  }
  if (i < t.size()) {
    out[i] = out[i + 1] = ' ';
    i += 2;
  }
}

void blank_raw_string(std::string_view t, std::string& out, size_t& i) {
  size_t open = t.find('(', i + 2);
  if (open == std::string_view::npos || open - i > 20) { ++i; return; }
  std::string end = ")" + std::string(t.substr(i + 2, open - i - 2)) + "\"";
  size_t close = t.find(end, open);
  size_t stop = close == std::string_view::npos ? t.size() : close + end.size();
  for (; i < stop; ++i) if (t[i] != '\n') out[i] = ' ';
}

void blank_quoted(std::string_view t, std::string& out, size_t& i) {
  char q = t[i++];
  while (i < t.size() && t[i] != q && t[i] != '\n') {
    if (t[i] == '\\' && i + 1 < t.size()) {
      out[i] = ' ';
      if (t[i + 1] != '\n') out[i + 1] = ' ';
      i += 2;
      continue;
    }
    out[i++] = ' ';
  }
  if (i < t.size() && t[i] == q) ++i;
}

/// Comments, literals and preprocessor lines replaced by spaces.
std::string blank_noncode(std::string_view t) {
  std::string out(t);
  bool line_start = true;
  for (size_t i = 0; i < t.size();) {
    char c = t[i];
    if (c == '\n') { line_start = true; ++i; continue; }
    if (line_start && (c == ' ' || c == '\t' || c == '\r')) { ++i; continue; }
    if (line_start && c == '#') { blank_until_newline(t, out, i); continue; }
    line_start = false;
    if (c == '/' && i + 1 < t.size() && t[i + 1] == '/') { blank_until_newline(t, out, i); continue; }
    if (c == '/' && i + 1 < t.size() && t[i + 1] == '*') { blank_block_comment(t, out, i); continue; }
    if (c == 'R' && i + 1 < t.size() && t[i + 1] == '"' && (i == 0 || !ident_char(t[i - 1]))) {
      blank_raw_string(t, out, i);
      continue;
    }
    if (c == '"' || (c == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(t[i - 1]))))) {
      blank_quoted(t, out, i);
      continue;
    }
    ++i;
  }
  return out;
}

size_t skip_ws(std::string_view s, size_t p) {
  while (p < s.size() && std::isspace(static_cast<unsigned char>(s[p]))) ++p;
  return p;
}

/// Index just past the bracket group opening at `p` (s[p] is '(' '<' or '{'); npos if unclosed
/// within `limit` bytes.
size_t skip_group(std::string_view s, size_t p, size_t limit) {
  char open = s[p];
  char close = open == '(' ? ')' : open == '<' ? '>' : '}';
  int depth = 0;
  size_t end = std::min(s.size(), p + limit);
  for (size_t i = p; i < end; ++i) {
    if (s[i] == open) ++depth;
    else if (s[i] == close && --depth == 0) return i + 1;
  }
  return std::string_view::npos;
}

/// __launch_bounds__, __attribute__, C10_LAUNCH_BOUNDS_1, LAUNCH_BOUNDS(…): decorations.
bool is_decoration(std::string_view w) {
  if (w.size() >= 4 && starts_with(w, "__") && ends_with(w, "__")) return true;
  if (w.size() < 2) return false;
  for (char c : w) if (!(std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

uint64_t fnv1a_nonspace(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

struct line_map {
  std::vector<size_t> starts{0};
  explicit line_map(std::string_view t) {
    for (size_t i = 0; i < t.size(); ++i) if (t[i] == '\n') starts.push_back(i + 1);
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

/// Parses the declarator after a `__global__` token at `p`; appends a definition on success.
void parse_kernel_after_global(std::string_view code, std::string_view text, const line_map& lines, size_t p,
                               const std::vector<std::string>& scopes, std::vector<kernel_definition>* out) {
  std::vector<std::string> qual;
  for (int tokens = 0; tokens < 64; ++tokens) {
    p = skip_ws(code, p);
    if (p >= code.size()) return;
    char c = code[p];
    if (c == '*' || c == '&') { ++p; continue; }
    if (c == '(') {
      p = skip_group(code, p, 4096);
      if (p == std::string_view::npos) return;
      continue;
    }
    if (!ident_start(c)) return;
    size_t w0 = p;
    while (p < code.size() && ident_char(code[p])) ++p;
    std::string_view w = code.substr(w0, p - w0);
    size_t q = skip_ws(code, p);
    if (q < code.size() && code[q] == '<' && !is_decoration(w)) {  // explicit specialisation name<…>
      size_t e = skip_group(code, q, 1024);
      if (e == std::string_view::npos) return;
      size_t r = skip_ws(code, e);
      if (r < code.size() && code[r] == '(') q = r, p = e;
    }
    if (q + 1 < code.size() && code[q] == ':' && code[q + 1] == ':') {
      qual.emplace_back(w);
      p = q + 2;
      continue;
    }
    if (q >= code.size() || code[q] != '(') { qual.clear(); continue; }
    if (is_decoration(w)) {
      p = skip_group(code, q, 4096);
      if (p == std::string_view::npos) return;
      continue;
    }
    size_t close = skip_group(code, q, 1 << 16);
    if (close == std::string_view::npos) return;
    kernel_definition d;
    d.symbol = std::string(w);
    d.scopes = scopes;
    for (auto& s : qual) d.scopes.push_back(s);
    auto params = split_top_level(code.substr(q + 1, close - q - 2), ',');
    d.param_count = (params.size() == 1 && (params[0].empty() || params[0] == "void")) ? 0 : static_cast<int>(params.size());
    size_t brace = code.find_first_of("{;", close);
    d.is_definition = brace != std::string_view::npos && code[brace] == '{';
    if (d.is_definition) {
      size_t end = skip_group(code, brace, code.size());
      d.body_hash = fnv1a_nonspace(code.substr(brace, (end == std::string_view::npos ? code.size() : end) - brace));
    }
    d.line = lines.line_of(w0);
    d.snippet = std::string(trim(lines.line_text(text, d.line)).substr(0, 200));
    out->push_back(std::move(d));
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

/// Host function or struct/class definition of `w` (in `names`) starting at code[w0, w1)?
/// Appends it to `out`. A function needs "name(…) [qualifiers] {"; a class "struct|class name
/// [<…>] [final] {|:".
void match_named_definition(std::string_view code, std::string_view text, const line_map& lines, size_t w0,
                            size_t w1, const std::vector<std::string>& scopes, std::vector<kernel_definition>* out) {
  size_t p = skip_ws(code, w1);
  size_t b = w0;
  while (b > 0 && std::isspace(static_cast<unsigned char>(code[b - 1]))) --b;
  bool after_class = (b >= 6 && code.substr(b - 6, 6) == "struct") || (b >= 5 && code.substr(b - 5, 5) == "class");
  if (b > 0 && (code[b - 1] == '.' || code[b - 1] == '>' || code[b - 1] == ':')) return;  // member / qualified use
  if (p < code.size() && code[p] == '<') {
    size_t e = skip_group(code, p, 1024);
    if (e == std::string_view::npos) return;
    p = skip_ws(code, e);
  }
  kernel_definition d;
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
  d.scopes = scopes;
  d.line = lines.line_of(w0);
  d.snippet = std::string(trim(lines.line_text(text, d.line)).substr(0, 200));
  out->push_back(std::move(d));
}

void scan_cpp(std::string_view text, const std::set<std::string>* names, std::vector<kernel_definition>* out) {
  std::string code = blank_noncode(text);
  line_map lines(text);
  std::vector<std::string> scopes;
  std::vector<size_t> pushed;  // per open brace: how many scope names it added
  for (size_t i = 0; i < code.size();) {
    char c = code[i];
    if (c == '{') { pushed.push_back(0); ++i; continue; }
    if (c == '}') {
      if (!pushed.empty()) {
        for (size_t k = 0; k < pushed.back() && !scopes.empty(); ++k) scopes.pop_back();
        pushed.pop_back();
      }
      ++i;
      continue;
    }
    if (!ident_start(c) || (i > 0 && ident_char(code[i - 1]))) { ++i; continue; }
    size_t w0 = i;
    while (i < code.size() && ident_char(code[i])) ++i;
    std::string_view w = std::string_view(code).substr(w0, i - w0);
    if (w == "namespace") {
      std::vector<std::string> ns;
      size_t brace = parse_namespace_head(code, i, &ns);
      if (brace == std::string_view::npos) continue;
      if (ns.empty()) ns.emplace_back("(anonymous namespace)");
      for (auto& n : ns) scopes.push_back(n);
      pushed.push_back(ns.size());
      i = brace + 1;
    } else if (names == nullptr && w == "__global__") {
      parse_kernel_after_global(code, text, lines, i, scopes, out);
    } else if (names != nullptr && names->count(std::string(w))) {
      match_named_definition(code, text, lines, w0, i, scopes, out);
    }
  }
}

}  // namespace

void scan_cpp_source(std::string_view text, std::vector<kernel_definition>* out) { scan_cpp(text, nullptr, out); }

void scan_cpp_named(std::string_view text, const std::set<std::string>& names, std::vector<kernel_definition>* out) {
  scan_cpp(text, &names, out);
}

}  // namespace magpie::source
