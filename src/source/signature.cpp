// Signature shapes (see signature.h). Plain scans over demangled or declared text; nothing here
// resolves a type, so every class or template-parameter type is '?' and matches anything.
#include "source/signature.h"

#include <algorithm>
#include <cctype>

#include "core/strings.h"
#include "source/kernel_name.h"

namespace magpie::source {
namespace {

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }

/// Identifier-like words ("a::b" kept whole) of `s` outside <…>, (…), {…} and […] ('<' and '>'
/// count only outside parentheses: `enable_if_t<(W > 0)>`).
std::vector<std::string> top_level_words(std::string_view s) {
  std::vector<std::string> out;
  int paren = 0, angle = 0;
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    if (c == '(' || c == '{' || c == '[') { ++paren; ++i; continue; }
    if (c == ')' || c == '}' || c == ']') { paren = std::max(0, paren - 1); ++i; continue; }
    if (paren == 0 && c == '<') { ++angle; ++i; continue; }
    if (paren == 0 && c == '>') { angle = std::max(0, angle - 1); ++i; continue; }
    if (paren > 0 || angle > 0 || !name_char(c)) { ++i; continue; }
    size_t j = i;
    while (j < s.size() && name_char(s[j])) ++j;
    out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

/// '*' / '&' / '[' outside <…> and {…} (a function pointer's "(*)" counts).
char indirection(std::string_view s) {
  int depth = 0;
  bool star = false, amp = false, bracket = false;
  for (char c : s) {
    if (c == '<' || c == '{') ++depth;
    else if (c == '>' || c == '}') depth = std::max(0, depth - 1);
    else if (depth == 0 && c == '*') star = true;
    else if (depth == 0 && c == '&') amp = true;
    else if (depth == 0 && c == '[') bracket = true;
  }
  return star ? 'p' : amp ? 'r' : bracket ? 'p' : '\0';
}

bool is_qualifier(std::string_view w) {
  for (std::string_view q : {"const", "volatile", "__restrict__", "__restrict", "restrict", "__grid_constant__",
                             "struct", "class", "enum", "register"})
    if (w == q) return true;
  return false;
}

bool integer_keyword(std::string_view w) {
  for (std::string_view k : {"int", "long", "short", "char", "unsigned", "signed", "__int128"})
    if (w == k) return true;
  return false;
}

bool builtin_keyword(std::string_view w) { return integer_keyword(w) || w == "float" || w == "double" || w == "bool"; }

/// Kind of a scalar type spelled by `words` (qualifiers and the declarator name removed).
char scalar_kind(std::vector<std::string> words) {
  if (words.empty()) return '?';
  for (auto& w : words)
    if (starts_with(w, "std::")) w = w.substr(5);
  if (words.size() == 1) {
    const std::string& w = words[0];
    if (w == "bool") return 'b';
    if (w == "float" || w == "double") return 'f';
    for (std::string_view t : {"int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
                               "size_t", "ssize_t", "ptrdiff_t", "intptr_t", "uintptr_t"})
      if (w == t) return 'i';
  }
  if (std::all_of(words.begin(), words.end(), [](const std::string& w) { return integer_keyword(w); })) return 'i';
  if (words.size() == 2 && words[0] == "long" && words[1] == "double") return 'f';
  return '?';
}

bool is_value_argument(std::string_view a) {
  if (a.empty()) return false;
  char c = a[0];
  if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '(' || c == '&') return true;
  return a == "true" || a == "false" || a == "nullptr";
}

/// Splits a template parameter list on top-level commas; '<' and '>' count only outside
/// parentheses (`std::enable_if_t<(W > 0), int>`).
std::vector<std::string> split_template_params(std::string_view s) {
  std::vector<std::string> out;
  int paren = 0, angle = 0;
  size_t begin = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    char c = i < s.size() ? s[i] : ',';
    if (c == '(' || c == '[' || c == '{') ++paren;
    else if ((c == ')' || c == ']' || c == '}') && paren > 0) --paren;
    else if (paren == 0 && c == '<') ++angle;
    else if (paren == 0 && c == '>' && angle > 0) --angle;
    else if (c == ',' && paren == 0 && angle == 0) {
      out.emplace_back(trim(s.substr(begin, i - begin)));
      begin = i + 1;
    }
  }
  return out;
}

bool compatible(char traced, char declared) { return traced == declared || traced == '?' || declared == '?'; }

/// Is `traced` an ordered subsequence of `declared` under compatible()?
bool embeds(std::string_view traced, std::string_view declared) {
  size_t j = 0;
  for (char t : traced) {
    while (j < declared.size() && !compatible(t, declared[j])) ++j;
    if (j == declared.size()) return false;
    ++j;
  }
  return true;
}

}  // namespace

std::string trace_template_shape(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += is_value_argument(a) ? 'V' : 'T';
  return s;
}

std::string trace_param_shape(const std::vector<std::string>& params) {
  std::string s;
  for (const auto& p : params) {
    if (char ind = indirection(p)) { s += ind; continue; }
    std::vector<std::string> words;
    for (auto& w : top_level_words(p))
      if (!is_qualifier(w)) words.push_back(std::move(w));
    s += scalar_kind(std::move(words));
  }
  return s;
}

std::string decl_template_shape(std::string_view head) {
  std::string s;
  for (const auto& raw : split_template_params(head)) {
    std::string_view p = raw;
    if (p.empty()) continue;
    if (contains(p, "...")) { s += '.'; continue; }
    std::vector<std::string> words = top_level_words(p.substr(0, std::min(p.find('='), p.size())));
    if (!words.empty() && words[0] == "template") { s += 'T'; continue; }  // template template parameter
    bool type_keyword = !words.empty() && (words[0] == "typename" || words[0] == "class");
    // `typename A::B<…>::type = 0` names a dependent *type* of a value parameter.
    bool dependent_value = type_keyword && words.size() >= 2 && contains(words[1], "::");
    if (type_keyword && !dependent_value) { s += 'T'; continue; }
    // A value of a builtin type, or of a dependent type; `E kind` may be an enum value or a
    // constrained type (`std::integral T`), and a function pointer's argument may print as a
    // name without '&': both '?'.
    bool builtin =
        !words.empty() && (builtin_keyword(words[0]) || scalar_kind({words[0]}) == 'i' || words[0] == "auto");
    s += (dependent_value || (builtin && !contains(p, "(*"))) ? 'V' : '?';
  }
  return s;
}

std::string decl_param_shape(const std::vector<std::string>& params) {
  std::string s;
  for (const auto& raw : params) {
    std::string_view p = raw;
    if (p.empty() || p == "void") continue;
    if (contains(p, "...")) { s += '.'; continue; }
    p = p.substr(0, std::min(p.find('='), p.size()));
    if (char ind = indirection(p)) { s += ind; continue; }
    std::vector<std::string> words;
    for (auto& w : top_level_words(p))
      if (!is_qualifier(w)) words.push_back(std::move(w));
    if (words.size() > 1 && !builtin_keyword(words.back())) words.pop_back();  // the parameter's name
    s += scalar_kind(std::move(words));
  }
  return s;
}

signature_fit compare_shape(std::string_view traced, std::string_view declared) {
  if (declared.find('.') != std::string_view::npos) {
    // A pack takes any number of arguments: the fixed kinds must appear in order.
    std::string fixed;
    for (char c : declared) if (c != '.') fixed += c;
    return embeds(fixed, traced) ? signature_fit::exact : signature_fit::differs;
  }
  if (traced.size() == declared.size()) {
    for (size_t i = 0; i < traced.size(); ++i)
      if (!compatible(traced[i], declared[i])) return signature_fit::differs;
    return signature_fit::exact;
  }
  if (traced.size() < declared.size() && embeds(traced, declared)) return signature_fit::extends;
  return signature_fit::differs;
}

signature_fit combine_fits(signature_fit a, signature_fit b) {
  if (a == signature_fit::unknown) return b;
  if (b == signature_fit::unknown) return a;
  if (a == signature_fit::differs || b == signature_fit::differs) return signature_fit::differs;
  if (a == signature_fit::extends || b == signature_fit::extends) return signature_fit::extends;
  return signature_fit::exact;
}

const char* signature_fit_name(signature_fit f) {
  switch (f) {
    case signature_fit::exact: return "exact";
    case signature_fit::extends: return "extends";
    case signature_fit::differs: return "differs";
    case signature_fit::unknown: return "unknown";
  }
  return "unknown";
}

}  // namespace magpie::source
