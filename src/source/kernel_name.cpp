// Kernel-name parsing (see kernel_name.h). Scans run backwards from the parameter list so a
// templated return type or "(anonymous namespace)" scope does not confuse the split.
#include "source/kernel_name.h"

#include <cctype>
#include <cstring>

#include "core/strings.h"
#include "source/demangler.h"

namespace magpie::source {
namespace {

constexpr std::string_view k_anon = "(anonymous namespace)";
constexpr std::string_view k_anon_token = "@anon@";

bool is_open(char c) { return c == '(' || c == '<' || c == '[' || c == '{'; }
bool is_close(char c) { return c == ')' || c == '>' || c == ']' || c == '}'; }
bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/// Index of the bracket opening the group that closes at `close_pos`, or npos.
size_t match_backward(std::string_view s, size_t close_pos) {
  int depth = 0;
  for (size_t i = close_pos + 1; i-- > 0;) {
    char c = s[i];
    if (c == '-' && i + 1 < s.size() && s[i + 1] == '>') continue;  // "->" is not a bracket
    if (is_close(c) && !(c == '>' && i > 0 && s[i - 1] == '-')) ++depth;
    else if (is_open(c)) {
      if (--depth == 0) return i;
    }
  }
  return std::string_view::npos;
}

std::string restore_anon(std::string s) { return replace_all(std::move(s), k_anon_token, k_anon); }

/// "{lambda(float)#1}" → "{lambda}", "::operator()() const" removed.
std::string collapse_lambdas(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 7, "{lambda") == 0) {
      size_t close = std::string_view::npos;
      int depth = 0;
      for (size_t j = i; j < s.size(); ++j) {
        if (s[j] == '{') ++depth;
        else if (s[j] == '}' && --depth == 0) { close = j; break; }
      }
      if (close == std::string_view::npos) { out.append(s.substr(i)); break; }
      out += "{lambda}";
      i = close + 1;
      continue;
    }
    if (s.compare(i, 20, "::operator()() const") == 0) { i += 20; continue; }
    out += s[i++];
  }
  return out;
}

bool is_plumbing(std::string_view base) {
  // TensorIterator launch helpers that wrap every functor; they say nothing about the op.
  for (std::string_view p : {"gpu_kernel_impl_nocast", "gpu_kernel_impl", "gpu_kernel_with_scalars",
                             "opmath_gpu_kernel_with_scalars", "launch_vectorized_kernel", "launch_legacy_kernel"})
    if (base == p) return true;
  return false;
}

/// Host functions owning lambdas ("ns::f<…>(args)::{lambda…}" → "ns::f") and functor classes
/// ("ns::BinaryFunctor<…>" → "ns::BinaryFunctor") anywhere inside a template argument.
void collect_functors(std::string_view arg, std::vector<std::string>* out) {
  auto add = [&](std::string name) {
    name = restore_anon(std::move(name));
    size_t c = name.rfind("::");
    if (is_plumbing(c == std::string::npos ? name : std::string_view(name).substr(c + 2))) return;
    for (const auto& f : *out) if (f == name) return;
    out->push_back(std::move(name));
  };
  for (size_t i = 0; i < arg.size();) {
    if (!(is_ident_char(arg[i]) || arg[i] == '@') || (i > 0 && (is_ident_char(arg[i - 1]) || arg[i - 1] == ':'))) {
      ++i;
      continue;
    }
    size_t start = i;  // an identifier chain a::b::name
    while (i < arg.size() && (is_ident_char(arg[i]) || arg[i] == '@' ||
                              (arg[i] == ':' && i + 1 < arg.size() && arg[i + 1] == ':'))) {
      i += arg[i] == ':' ? 2 : 1;
    }
    std::string_view chain = arg.substr(start, i - start);
    if (chain.empty() || (chain[0] >= '0' && chain[0] <= '9')) continue;
    size_t j = i;
    if (j < arg.size() && arg[j] == '<') {  // skip template arguments
      for (int d = 0; j < arg.size(); ++j) {
        if (arg[j] == '<') ++d;
        else if (arg[j] == '>' && --d == 0) { ++j; break; }
      }
    }
    std::string_view base = chain.substr(chain.rfind("::") == std::string_view::npos ? 0 : chain.rfind("::") + 2);
    if (j < arg.size() && arg[j] == '(') {
      size_t k = j;
      for (int d = 0; k < arg.size(); ++k) {
        if (arg[k] == '(') ++d;
        else if (arg[k] == ')' && --d == 0) break;
      }
      if (k + 2 < arg.size() && arg.compare(k + 1, 2, "::") == 0) add(std::string(chain));
    } else if (contains(base, "Functor")) {
      add(std::string(chain));
    }
  }
}

std::vector<std::string> split_scopes(std::string_view q) {
  std::vector<std::string> out;
  for (size_t pos = 0;;) {
    size_t next = q.find("::", pos);
    out.emplace_back(q.substr(pos, next == std::string_view::npos ? next : next - pos));
    if (next == std::string_view::npos) return out;
    pos = next + 2;
  }
}

/// A name the demangler could not read, reduced to its qualified name (see name_only).
parsed_kernel_name name_only(parsed_kernel_name r, const std::string& qualified) {
  r.name_only = true;
  r.qualified_name = qualified;
  size_t c = qualified.rfind("::");
  r.base_name = c == std::string::npos ? qualified : qualified.substr(c + 2);
  if (c != std::string::npos) r.scopes = split_scopes(qualified.substr(0, c));
  r.is_cpp_signature = true;
  r.normalized = qualified + "<…>(…)";
  return r;
}

/// ck_tile::kentry<N, Kernel<…>, …> runs Kernel::operator(): that class is the op.
void add_entry_point_class(parsed_kernel_name* r) {
  if (r->qualified_name != "ck_tile::kentry") return;
  for (const auto& a : r->template_args) {
    if (a.empty() || std::isdigit(static_cast<unsigned char>(a[0]))) continue;
    std::string cls = a.substr(0, a.find('<'));
    if (!cls.empty() && cls.find('(') == std::string::npos) r->functors.insert(r->functors.begin(), cls);
    return;
  }
}

}  // namespace

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) if (!is_ident_char(c)) return false;
  return true;
}

std::vector<std::string> split_top_level(std::string_view s, char sep) {
  std::vector<std::string> parts;
  if (trim(s).empty()) return parts;
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '>' && i > 0 && s[i - 1] == '-') continue;
    if (is_open(c)) ++depth;
    else if (is_close(c) && depth > 0) --depth;
    else if (c == sep && depth == 0) {
      parts.emplace_back(trim(s.substr(begin, i - begin)));
      begin = i + 1;
    }
  }
  parts.emplace_back(trim(s.substr(begin)));
  return parts;
}

std::string demangle(std::string_view name) {
  std::string n(trim(name));
  std::string_view core = n;
  if (starts_with(core, "__Z")) core.remove_prefix(1);
  if (!starts_with(core, "_Z")) return n;
  auto out = itanium_demangle(strip_clone_suffixes(core));
  return out ? std::move(*out) : n;
}

std::string mangled_qualified_name(std::string_view name) {
  std::string_view s = trim(name);
  if (starts_with(s, "__Z")) s.remove_prefix(1);
  if (!starts_with(s, "_Z")) return "";
  size_t p = 2;
  if (p < s.size() && s[p] == 'L') ++p;  // internal linkage
  bool nested = p < s.size() && s[p] == 'N';
  if (nested) {
    ++p;
    while (p < s.size() && (s[p] == 'r' || s[p] == 'V' || s[p] == 'K')) ++p;  // cv-qualifiers
  }
  std::vector<std::string> parts;
  while (p < s.size()) {
    if (nested && s.compare(p, 2, "St") == 0 && parts.empty()) { parts.emplace_back("std"); p += 2; continue; }
    if (!std::isdigit(static_cast<unsigned char>(s[p]))) break;
    size_t q = p;
    while (q < s.size() && std::isdigit(static_cast<unsigned char>(s[q]))) ++q;
    auto len = parse_int(s.substr(p, q - p));
    if (!len || *len <= 0 || q + static_cast<size_t>(*len) > s.size()) return "";
    std::string_view id = s.substr(q, static_cast<size_t>(*len));
    if (starts_with(id, "_GLOBAL__N")) parts.emplace_back(k_anon);
    else if (is_identifier(id)) parts.emplace_back(id);
    else return "";
    p = q + static_cast<size_t>(*len);
    if (!nested) break;
  }
  // A nested name ends its components with 'I' (template arguments) or 'E'; a plain one is
  // followed by 'I' or the parameter types.
  if (parts.empty() || p >= s.size() || (nested && s[p] != 'I' && s[p] != 'E') || parts.back() == k_anon)
    return "";
  return join(parts, "::");
}

std::string strip_clone_suffixes(std::string_view name) {
  std::string s(trim(name));
  for (bool changed = true; changed;) {
    changed = false;
    for (std::string_view suf : {" [clone .kd]", ".kd", ".k.d", ".cold"}) {
      if (ends_with(s, suf)) { s.erase(s.size() - suf.size()); changed = true; }  // erase: resize trips GCC 12 -Wstringop-overflow
    }
    // " [clone .constprop.0]" and friends at the end of a demangled name.
    if (ends_with(s, "]")) {
      size_t p = s.rfind(" [clone ");
      if (p != std::string::npos) { s.resize(p); changed = true; }
    }
    // Mangled GCC clones: "_Z3foov.constprop.0", ".isra.1", ".part.2".
    for (std::string_view tag : {".constprop.", ".isra.", ".part.", ".lto_priv."}) {
      size_t p = s.rfind(tag);
      if (p != std::string::npos && p > 0) {
        std::string_view digits = std::string_view(s).substr(p + tag.size());
        if (!digits.empty() && parse_int(digits)) { s.resize(p); changed = true; }
      }
    }
    s = std::string(trim(s));
  }
  return s;
}

parsed_kernel_name parse_kernel_name(std::string_view name) {
  parsed_kernel_name r;
  r.original = std::string(name);
  r.demangled = strip_clone_suffixes(demangle(name));
  if (starts_with(r.demangled, "_Z") || starts_with(r.demangled, "__Z")) {
    std::string q = mangled_qualified_name(r.demangled);
    if (!q.empty()) return name_only(std::move(r), q);
  }
  std::string s = replace_all(r.demangled, k_anon, k_anon_token);
  for (std::string_view q : {" const", " volatile", " &&", " &"}) {
    if (ends_with(s, q)) s.erase(s.size() - q.size());
  }
  std::string_view v = s;
  size_t name_end = v.size();
  if (!v.empty() && v.back() == ')') {
    size_t open = match_backward(v, v.size() - 1);
    // A demangled parameter list follows the name directly; "Memset (Device)" is not C++.
    if (open != std::string_view::npos && open > 0 && v[open - 1] != ' ') {
      std::string_view params = v.substr(open + 1, v.size() - open - 2);
      auto parts = split_top_level(params, ',');
      r.param_count = (parts.size() == 1 && (parts[0].empty() || parts[0] == "void")) ? 0 : static_cast<int>(parts.size());
      if (r.param_count > 0)
        for (auto& part : parts) r.params.push_back(restore_anon(std::move(part)));
      name_end = open;
    }
  }
  std::string_view head = trim(v.substr(0, name_end));
  if (!head.empty() && head.back() == '>') {
    size_t open = match_backward(head, head.size() - 1);
    if (open != std::string_view::npos && open > 0) {
      for (auto& a : split_top_level(head.substr(open + 1, head.size() - open - 2), ',')) {
        collect_functors(a, &r.functors);
        r.template_args.push_back(restore_anon(a));
      }
      head = head.substr(0, open);
    }
  }
  // The qualified name is the last space-separated word at depth 0.
  size_t sp = std::string_view::npos;
  int depth = 0;
  for (size_t i = head.size(); i-- > 0;) {
    char c = head[i];
    if (is_close(c)) ++depth;
    else if (is_open(c)) --depth;
    else if (c == ' ' && depth == 0) { sp = i; break; }
  }
  std::string_view qual = sp == std::string_view::npos ? head : head.substr(sp + 1);
  if (sp != std::string_view::npos) r.return_type = std::string(trim(head.substr(0, sp)));
  std::vector<std::string> comps;
  for (size_t pos = 0;;) {
    size_t next = qual.find("::", pos);
    comps.push_back(restore_anon(std::string(qual.substr(pos, next == std::string_view::npos ? next : next - pos))));
    if (next == std::string_view::npos) break;
    pos = next + 2;
  }
  r.base_name = comps.back();
  comps.pop_back();
  r.scopes = comps;
  r.qualified_name = restore_anon(std::string(qual));
  bool shaped = r.param_count >= 0 || !r.template_args.empty() || !r.scopes.empty();
  r.is_cpp_signature = shaped && is_identifier(r.base_name);
  if (!is_identifier(r.base_name)) r.base_name.clear();
  r.normalized = r.qualified_name;
  if (!r.template_args.empty()) {
    std::vector<std::string> collapsed;
    for (const auto& a : r.template_args) collapsed.push_back(collapse_lambdas(a));
    r.normalized += "<" + join(collapsed, ", ") + ">";
  }
  add_entry_point_class(&r);
  return r;
}

}  // namespace magpie::source
