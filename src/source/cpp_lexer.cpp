// C++/CUDA lexing for the kernel scanner (see cpp_lexer.h). Linear scans, no regex.
#include "source/cpp_lexer.h"

#include <algorithm>
#include <cctype>

#include "core/strings.h"
#include "source/kernel_name.h"

namespace magpie::source {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }

size_t skip_ws(std::string_view s, size_t p) {
  while (p < s.size() && std::isspace(static_cast<unsigned char>(s[p]))) ++p;
  return p;
}

size_t skip_group(std::string_view s, size_t p, size_t limit) {
  char open = s[p];
  char close = open == '(' ? ')' : open == '[' ? ']' : open == '<' ? '>' : '}';
  int depth = 0;
  size_t end = std::min(s.size(), p + limit);
  for (size_t i = p; i < end; ++i) {
    if (s[i] == open) ++depth;
    else if (s[i] == close && --depth == 0) return i + 1;
  }
  return std::string_view::npos;
}

size_t skip_template_args(std::string_view s, size_t p, size_t limit) {
  int angle = 0, paren = 0;
  size_t end = std::min(s.size(), p + limit);
  for (size_t i = p; i < end; ++i) {
    char c = s[i];
    if (c == '(' || c == '[') {
      ++paren;
    } else if (c == ')' || c == ']') {
      if (--paren < 0) return std::string_view::npos;
    } else if (paren == 0) {
      if (c == '<') ++angle;
      else if (c == '>' && !(i > 0 && s[i - 1] == '-') && --angle == 0) return i + 1;
      else if (c == ';' || c == '{' || c == '}') return std::string_view::npos;
    }
  }
  return std::string_view::npos;
}

bool is_decoration(std::string_view w) {
  if (w.size() >= 4 && starts_with(w, "__") && ends_with(w, "__")) return true;
  if (w.size() < 2) return false;
  for (char c : w)
    if (!(std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      return false;
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

std::string expand_kernel_name(const kernel_macro& m, const std::vector<std::string>& args) {
  std::string name;
  for (const auto& piece : m.pieces) {
    if (piece.param < 0) {
      name += piece.literal;
      continue;
    }
    if (static_cast<size_t>(piece.param) >= args.size() || m.params[piece.param] == "...") return "";
    std::string_view a = trim(args[piece.param]);
    if (a.empty() || !std::all_of(a.begin(), a.end(), ident_char)) return "";
    name += a;
  }
  return is_identifier(name) ? name : "";
}

namespace {

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
  if (open == std::string_view::npos || open - i > 20) {
    ++i;
    return;
  }
  std::string end = ")" + std::string(t.substr(i + 2, open - i - 2)) + "\"";
  size_t close = t.find(end, open);
  size_t stop = close == std::string_view::npos ? t.size() : close + end.size();
  for (; i < stop; ++i)
    if (t[i] != '\n') out[i] = ' ';
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

/// A directive's logical line without the '#', continuations joined and comments removed.
std::string directive_text(std::string_view raw) {
  std::string s;
  for (size_t i = 1; i < raw.size(); ++i) {
    if (raw[i] == '\\' && i + 1 < raw.size() && raw[i + 1] == '\n') { s += ' '; ++i; continue; }
    if (raw[i] == '/' && i + 1 < raw.size() && raw[i + 1] == '/') break;
    if (raw[i] == '/' && i + 1 < raw.size() && raw[i + 1] == '*') {
      size_t e = raw.find("*/", i + 2);
      if (e == std::string_view::npos) break;
      s += ' ';
      i = e + 1;
      continue;
    }
    s += raw[i];
  }
  return s;
}

/// The declarator after `__global__` in a macro replacement: name pieces (## pasting of
/// parameters and literals), parameter count, body or declaration. False when none is found.
bool parse_macro_declarator(std::string_view body, kernel_macro* m) {
  size_t g = body.find("__global__");
  if (g == std::string_view::npos) return false;
  size_t p = g + 10;
  for (int tokens = 0; tokens < 64; ++tokens) {
    p = skip_ws(body, p);
    if (p >= body.size()) return false;
    char c = body[p];
    if (c == '*' || c == '&') { ++p; continue; }
    if (c == '(') {
      if ((p = skip_group(body, p, 4096)) == std::string_view::npos) return false;
      continue;
    }
    if (!ident_start(c)) return false;
    std::vector<macro_name_piece> pieces;
    for (;;) {  // ident (## ident)*
      size_t w0 = p;
      while (p < body.size() && ident_char(body[p])) ++p;
      std::string w(body.substr(w0, p - w0));
      auto it = std::find(m->params.begin(), m->params.end(), w);
      pieces.push_back(it == m->params.end() ? macro_name_piece{w, -1}
                                             : macro_name_piece{"", static_cast<int>(it - m->params.begin())});
      size_t q = skip_ws(body, p);
      if (q + 1 >= body.size() || body[q] != '#' || body[q + 1] != '#') break;
      p = skip_ws(body, q + 2);
      if (p >= body.size() || !ident_start(body[p])) return false;
    }
    size_t q = skip_ws(body, p);
    if (q < body.size() && body[q] == '<') {
      size_t e = skip_template_args(body, q, 1024);
      if (e == std::string_view::npos) return false;
      size_t r = skip_ws(body, e);
      if (r >= body.size() || body[r] != '(') { p = e; continue; }
      q = r;
    }
    if (q + 1 < body.size() && body[q] == ':' && body[q + 1] == ':') { p = q + 2; continue; }
    if (q >= body.size() || body[q] != '(') { p = q; continue; }
    if (pieces.size() == 1 && pieces[0].param < 0 && is_decoration(pieces[0].literal)) {
      if ((p = skip_group(body, q, 4096)) == std::string_view::npos) return false;
      continue;
    }
    size_t close = skip_group(body, q, 1 << 16);
    if (close == std::string_view::npos) return false;
    auto params = split_top_level(body.substr(q + 1, close - q - 2), ',');
    m->param_count = (params.size() == 1 && (params[0].empty() || params[0] == "void")) ? 0 : static_cast<int>(params.size());
    size_t brace = body.find_first_of("{;", close);
    m->defines_body = brace != std::string_view::npos && body[brace] == '{';
    m->pieces = std::move(pieces);
    return true;
  }
  return false;
}

/// `define NAME(params) replacement` with __global__ in the replacement → a kernel macro.
bool parse_kernel_macro(std::string_view d, kernel_macro* m) {
  size_t p = skip_ws(d, 6);
  size_t n0 = p;
  while (p < d.size() && ident_char(d[p])) ++p;
  if (p == n0 || p >= d.size() || d[p] != '(') return false;  // object-like macros are not followed
  size_t close = d.find(')', p);
  if (close == std::string_view::npos) return false;
  m->name = std::string(d.substr(n0, p - n0));
  for (auto& a : split_top_level(d.substr(p + 1, close - p - 1), ',')) m->params.push_back(a);
  return parse_macro_declarator(d.substr(close + 1), m);
}

/// Nesting state of conditional directives (for dead-branch blanking).
struct cond_frame {
  bool parent_dead = false, dead = false, taken = false;
};

std::string_view first_word(std::string_view s, size_t* end) {
  size_t b = skip_ws(s, 0), e = b;
  while (e < s.size() && ident_char(s[e])) ++e;
  *end = e;
  return s.substr(b, e - b);
}

/// Applies one directive to the frame stack; returns the directive to record (if any).
bool apply_conditional(std::string_view d, size_t offset, std::vector<cond_frame>& frames, pp_directive* out) {
  size_t e = 0;
  std::string_view kw = first_word(d, &e);
  std::string_view expr = trim(d.substr(e));
  bool cur_dead = !frames.empty() && (frames.back().parent_dead || frames.back().dead);
  out->offset = offset;
  if (kw == "if" || kw == "ifdef" || kw == "ifndef") {
    cond_frame f;
    f.parent_dead = cur_dead;
    f.dead = kw == "if" && expr == "0";
    f.taken = kw == "if" && expr == "1";
    frames.push_back(f);
    *out = {pp_directive::kind::if_, offset, f.dead};
    return !f.parent_dead;
  }
  if (frames.empty()) return false;
  cond_frame& f = frames.back();
  if (kw == "elif" || kw == "elifdef" || kw == "elifndef") {
    f.dead = f.taken || (kw == "elif" && expr == "0");
    if (!f.dead && kw == "elif" && expr == "1") f.taken = true;
    *out = {pp_directive::kind::elif, offset, f.dead};
    return !f.parent_dead;
  }
  if (kw == "else") {
    f.dead = f.taken;
    *out = {pp_directive::kind::else_, offset, f.dead};
    return !f.parent_dead;
  }
  if (kw == "endif") {
    bool live_parent = !f.parent_dead;
    frames.pop_back();
    *out = {pp_directive::kind::endif, offset, false};
    return live_parent;
  }
  return false;
}

}  // namespace

lexed_cpp lex_cpp(std::string_view t) {
  lexed_cpp r;
  r.code = std::string(t);
  std::string& out = r.code;
  std::vector<cond_frame> frames;
  auto dead = [&] { return !frames.empty() && (frames.back().parent_dead || frames.back().dead); };
  size_t counted = 0;
  int line = 1;
  bool line_start = true;
  for (size_t i = 0; i < t.size();) {
    char c = t[i];
    if (c == '\n') { line_start = true; ++i; continue; }
    if (line_start && (c == ' ' || c == '\t' || c == '\r')) { ++i; continue; }
    if (line_start && c == '#') {
      size_t start = i;
      blank_until_newline(t, out, i);
      std::string d = directive_text(t.substr(start, i - start));
      pp_directive pd;
      if (apply_conditional(d, start, frames, &pd)) {
        r.conditionals.push_back(pd);
      } else if (!dead() && starts_with(trim(d), "define") && contains(d, "__global__")) {
        kernel_macro m;
        if (parse_kernel_macro(trim(d), &m)) {
          line += static_cast<int>(std::count(t.begin() + static_cast<long>(counted), t.begin() + static_cast<long>(start), '\n'));
          counted = start;
          m.line = line;
          r.macros.push_back(std::move(m));
        }
      }
      continue;
    }
    line_start = false;
    if (c == '/' && i + 1 < t.size() && t[i + 1] == '/') { blank_until_newline(t, out, i); continue; }
    if (c == '/' && i + 1 < t.size() && t[i + 1] == '*') { blank_block_comment(t, out, i); continue; }
    if (dead()) { out[i++] = ' '; continue; }
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
  return r;
}

}  // namespace magpie::source
