// Python scanner for Triton JIT kernel definitions (see repo_index.h). Line based: decorator
// blocks (possibly spanning lines) followed by `def name(`; a def counts when one decorator's
// last dotted component is `jit` (triton.jit, jit, tl.jit …). Triple-quoted strings are not
// skipped (inductor's output_code.py embeds kernel sources in them) but are flagged.
#include <cctype>

#include "core/strings.h"
#include "source/kernel_name.h"
#include "source/repo_index.h"

namespace magpie::source {
namespace {

int indent_of(std::string_view line) {
  int n = 0;
  for (char c : line) {
    if (c == ' ') ++n;
    else if (c == '\t') n += 8;
    else break;
  }
  return n;
}

int count_occurrences(std::string_view s, std::string_view needle) {
  int n = 0;
  for (size_t p = s.find(needle); p != std::string_view::npos; p = s.find(needle, p + needle.size())) ++n;
  return n;
}

int paren_balance(std::string_view s) {
  int b = 0;
  for (char c : s) {
    if (c == '(' || c == '[' || c == '{') ++b;
    else if (c == ')' || c == ']' || c == '}') --b;
  }
  return b;
}

/// "@triton.autotune(configs=…" → "triton.autotune".
std::string decorator_name(std::string_view stripped) {
  size_t i = 1;
  while (i < stripped.size() && (std::isalnum(static_cast<unsigned char>(stripped[i])) || stripped[i] == '_' || stripped[i] == '.')) ++i;
  return std::string(stripped.substr(1, i - 1));
}

bool is_jit(const std::string& decorator) {
  size_t dot = decorator.rfind('.');
  std::string_view last = dot == std::string::npos ? std::string_view(decorator) : std::string_view(decorator).substr(dot + 1);
  return last == "jit";
}

uint64_t fnv1a(std::string_view s, uint64_t h) {
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

/// Parameter count of the def starting at lines[i] (signature may span lines); -1 if unclosed.
int python_param_count(const std::vector<std::string_view>& lines, size_t i) {
  std::string sig;
  for (size_t k = i; k < lines.size() && k < i + 200; ++k) {
    sig += std::string(lines[k]);
    sig += ' ';
    size_t open = sig.find('(');
    if (open != std::string::npos && paren_balance(std::string_view(sig).substr(open)) <= 0) {
      int depth = 0;
      size_t close = open;
      for (; close < sig.size(); ++close) {
        if (sig[close] == '(') ++depth;
        else if (sig[close] == ')' && --depth == 0) break;
      }
      auto parts = split_top_level(std::string_view(sig).substr(open + 1, close - open - 1), ',');
      int n = 0;
      for (auto& p : parts) if (!p.empty() && p != "*" && p != "/") ++n;
      return n;
    }
  }
  return -1;
}

/// Hash of the body lines (indented deeper than the def) up to the dedent or a closing ''' line.
uint64_t python_body_hash(const std::vector<std::string_view>& lines, size_t def_line, int def_indent) {
  uint64_t h = 1469598103934665603ull;
  for (size_t k = def_line + 1; k < lines.size(); ++k) {
    std::string_view t = trim(lines[k]);
    if (t.empty()) continue;
    if (indent_of(lines[k]) <= def_indent || starts_with(t, "'''") || starts_with(t, "\"\"\"")) break;
    h = fnv1a(t, h);
    h = fnv1a("\n", h);
  }
  return h;
}

}  // namespace

void scan_python_source(std::string_view text, std::vector<kernel_definition>* out) {
  bool inductor = contains(text, "torch._inductor") || contains(text, "triton_heuristics");
  std::vector<std::string_view> lines;
  for (size_t b = 0; b <= text.size();) {
    size_t e = text.find('\n', b);
    if (e == std::string_view::npos) e = text.size();
    lines.push_back(text.substr(b, e - b));
    b = e + 1;
  }
  bool in_string = false;
  std::vector<std::string> decorators;
  int open_decorator_parens = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    std::string_view t = trim(line);
    bool string_at_start = in_string;
    if ((count_occurrences(line, "'''") + count_occurrences(line, "\"\"\"")) % 2 == 1) in_string = !in_string;
    if (open_decorator_parens > 0) {
      open_decorator_parens += paren_balance(line);
      continue;
    }
    if (t.empty() || t[0] == '#') continue;
    if (t[0] == '@') {
      decorators.push_back(decorator_name(t));
      open_decorator_parens = std::max(0, paren_balance(t));
      continue;
    }
    std::string_view d = t;
    if (starts_with(d, "async ")) d = trim(d.substr(6));
    if (starts_with(d, "def ")) {
      bool jit = false;
      for (const auto& dec : decorators) jit = jit || is_jit(dec);
      size_t b = 4;
      while (b < d.size() && d[b] == ' ') ++b;
      size_t e = b;
      while (e < d.size() && (std::isalnum(static_cast<unsigned char>(d[e])) || d[e] == '_')) ++e;
      std::string name(d.substr(b, e - b));
      if (jit && is_identifier(name)) {
        kernel_definition def;
        def.symbol = name;
        def.language = "triton";
        def.decorators = join(decorators, ",");
        def.line = static_cast<int>(i) + 1;
        def.param_count = python_param_count(lines, i);
        def.in_string = string_at_start;
        def.inductor = inductor;
        def.body_hash = python_body_hash(lines, i, indent_of(line));
        def.snippet = std::string(t.substr(0, 200));
        out->push_back(std::move(def));
      }
    }
    decorators.clear();
  }
}

}  // namespace magpie::source
