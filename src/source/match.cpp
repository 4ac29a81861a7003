// Candidate definitions and the evidence filters of one kernel-name lookup (see match.h and
// docs/source-mapping.md for the rules and the confidence factors).
#include "source/match.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include "core/strings.h"

namespace magpie::source {
namespace {

bool mode_accepts(lookup_mode m, const kernel_definition& d) {
  if (m == lookup_mode::python) return d.language == "triton";
  if (m == lookup_mode::cpp) return d.language != "triton";
  return m == lookup_mode::any;
}

/// The suffix Triton 2.x appends to a kernel's name ("0d1d2d3de4c": for argument i, "i" then
/// 'c' when equal to 1, 'd' when divisible by 16, 'e' when divisible by 8). Triton 3 and
/// Inductor add none (Inductor's "_0" index is part of the def name).
bool triton_signature_suffix(std::string_view s) {
  if (s.empty()) return false;
  int expect = 0;
  for (size_t p = 0; p < s.size();) {
    size_t q = p;
    while (q < s.size() && std::isdigit(static_cast<unsigned char>(s[q]))) ++q;
    auto v = parse_int(s.substr(p, q - p));
    if (q == p || !v || *v != expect++) return false;
    p = q;
    for (char f : {'c', 'd', 'e'})
      if (p < s.size() && s[p] == f) ++p;
  }
  return true;
}

/// Triton kernels whose names start with `stem` + '_' (other than `except`): what a trace name
/// sharing that stem could also mean.
std::vector<const kernel_definition*> triton_siblings(const repo_index& idx, const std::string& stem,
                                                      const std::set<std::string>& except) {
  std::vector<const kernel_definition*> out;
  for (const auto& d : idx.definitions()) {
    if (d.language != "triton" || d.in_string || except.count(d.symbol)) continue;
    if (d.symbol.size() > stem.size() && starts_with(d.symbol, stem) && d.symbol[stem.size()] == '_') out.push_back(&d);
    if (out.size() >= 10) break;
  }
  return out;
}

/// Logical operators of an enable_if condition ("&&:1 ||:0 ==:0 !=:0 !:0"): they survive
/// demangling, so they tell SFINAE overloads of one kernel apart.
std::string logic_signature(std::string_view t) {
  int and_ = 0, or_ = 0, eq = 0, ne = 0, not_ = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i], n = i + 1 < t.size() ? t[i + 1] : '\0';
    if (c == '&' && n == '&') { ++and_; ++i; }
    else if (c == '|' && n == '|') { ++or_; ++i; }
    else if (c == '=' && n == '=') { ++eq; ++i; }
    else if (c == '!' && n == '=') { ++ne; ++i; }
    else if (c == '!') ++not_;
  }
  return strprintf("&&:%d ||:%d ==:%d !=:%d !:%d", and_, or_, eq, ne, not_);
}

using def_list = std::vector<const kernel_definition*>;

/// Keeps the definitions satisfying `pred` when there are any; false (nothing changed) otherwise.
template <typename Pred>
bool keep_if_any(def_list* defs, Pred pred) {
  def_list kept;
  for (const auto* d : *defs) if (pred(*d)) kept.push_back(d);
  if (kept.empty()) return false;
  defs->swap(kept);
  return true;
}

std::string location_of(const repo_index& idx, const kernel_definition& d) {
  return idx.root_variable(d.root) + "/" + d.rel_path.generic_string() + ":" + std::to_string(d.line);
}

/// Identical copies (same body and signature shape) are one definition: keep a primary path over
/// a copy's, one not embedded in a string, then the shortest path.
void collapse_identical(match_state* m) {
  auto& defs = m->defs;
  std::stable_sort(defs.begin(), defs.end(), [](const kernel_definition* a, const kernel_definition* b) {
    bool ca = is_secondary_copy_path(a->rel_path), cb = is_secondary_copy_path(b->rel_path);
    if (ca != cb) return !ca;
    if (a->in_string != b->in_string) return !a->in_string;
    auto la = a->rel_path.generic_string().size(), lb = b->rel_path.generic_string().size();
    if (la != lb) return la < lb;
    return std::tie(a->root, a->rel_path, a->line) < std::tie(b->root, b->rel_path, b->line);
  });
  std::set<std::tuple<std::string, uint64_t, std::string, std::string>> seen;
  def_list unique;
  size_t copies = 0;
  for (const auto* d : defs) {
    if (d->body_hash != 0 && !seen.insert({d->symbol, d->body_hash, d->template_shape, d->param_shape}).second) {
      ++copies;
      continue;
    }
    unique.push_back(d);
  }
  if (copies > 0) m->notes.push_back(strprintf("%zu identical cop%s ignored", copies, copies == 1 ? "y" : "ies"));
  defs.swap(unique);
}

signature_fit fit_of(const parsed_kernel_name& n, const kernel_definition& d) {
  if (n.name_only || n.param_count < 0 || !d.shape_known || d.language == "triton") return signature_fit::unknown;
  return combine_fits(compare_shape(trace_template_shape(n.template_args), d.template_shape),
                      compare_shape(trace_param_shape(n.params), d.param_shape));
}

int fit_rank(signature_fit f) {
  switch (f) {
    case signature_fit::exact: return 0;
    case signature_fit::unknown: return 1;
    case signature_fit::extends: return 2;
    case signature_fit::differs: return 3;
  }
  return 3;
}

std::string count_text(size_t n, const char* what) { return strprintf("%zu %s%s", n, what, n == 1 ? "" : "s"); }

/// Keeps the definitions whose signature shape fits the trace best; scales the confidence
/// (extends ×0.85, differs ×0.5, trace name not decoded ×0.9) and says why.
void narrow_by_signature(const parsed_kernel_name& n, match_state* m) {
  int best = 3;
  for (const auto* d : m->defs) best = std::min(best, fit_rank(fit_of(n, *d)));
  keep_if_any(&m->defs, [&](const kernel_definition& d) { return fit_rank(fit_of(n, d)) == best; });
  m->fit = fit_of(n, *m->defs.front());
  const kernel_definition& d = *m->defs.front();
  std::string traced = count_text(n.template_args.size(), "template argument") + " and " +
                       count_text(n.params.size(), "parameter");
  std::string declared = count_text(d.template_shape.size(), "template parameter") + " and " +
                         count_text(d.param_shape.size(), "parameter");
  if (m->fit == signature_fit::extends) {
    m->confidence *= 0.85;
    m->notes.push_back("the definition extends the traced signature (trace: " + traced + "; definition: " + declared +
                       "): the kernel changed since the traced build, or this is a newer copy");
  } else if (m->fit == signature_fit::differs) {
    m->confidence *= 0.5;
    m->notes.push_back("signature does not match (trace: " + traced + "; definition: " + declared +
                       "): probably another kernel of the same name");
  } else if (n.name_only) {
    m->confidence *= 0.9;
    m->notes.emplace_back("template arguments and parameters not decoded: matched by qualified name only");
  }
}

/// Of definitions in several files, the one file outside test/benchmark/copy paths wins (×0.9);
/// the others become alternatives.
void prefer_primary(const repo_index& idx, match_state* m) {
  std::set<std::pair<size_t, std::string>> files, primary;
  for (const auto* d : m->defs) {
    files.insert({d->root, d->rel_path.generic_string()});
    if (!is_secondary_copy_path(d->rel_path)) primary.insert({d->root, d->rel_path.generic_string()});
  }
  if (files.size() < 2 || primary.size() != 1) return;
  const auto& keep = *primary.begin();
  def_list kept;
  std::vector<std::string> copies;
  for (const auto* d : m->defs) {
    if (std::pair{d->root, d->rel_path.generic_string()} == keep) kept.push_back(d);
    else {
      m->alternatives.push_back(d);
      copies.push_back(location_of(idx, *d));
    }
  }
  m->defs.swap(kept);
  m->confidence *= 0.9;
  m->notes.push_back(strprintf("primary definition preferred over %zu cop%s", copies.size(),
                               copies.size() == 1 ? "y" : "ies") +
                     " under test/benchmark/copy paths: " + join(copies, ", "));
}

}  // namespace

bool is_secondary_copy_path(const fs::path& rel) {
  static const std::set<std::string> k_dirs = {"test",      "tests",      "testing", "unittest", "unittests",
                                               "benchmark", "benchmarks", "bench",   "benches"};
  auto copy_marked = [](const std::string& s) {
    for (std::string_view suf : {"_copy", "-copy", " copy", "_bak", "_backup", "_old", ".orig", "_orig"})
      if (ends_with(s, suf)) return true;
    return false;
  };
  std::vector<std::string> parts;
  for (const auto& p : rel) parts.push_back(to_lower(p.string()));
  for (size_t i = 0; i + 1 < parts.size(); ++i)
    if (k_dirs.count(parts[i]) || copy_marked(parts[i])) return true;
  if (parts.empty()) return false;
  std::string stem = parts.back().substr(0, parts.back().rfind('.'));
  return copy_marked(stem);
}

match_state candidates_for(const kernel_class& c, const repo_index& idx) {
  match_state m;
  for (const auto* d : idx.lookup(c.symbol)) if (mode_accepts(c.mode, *d)) m.defs.push_back(d);
  if (!m.defs.empty() || c.mode == lookup_mode::cpp) return m;
  std::map<std::string, std::vector<const kernel_definition*>> by_prefix;
  std::string specialised;  // the prefix whose remainder is a Triton signature suffix
  for (size_t i = 1; i < c.symbol.size(); ++i) {
    if (c.symbol[i] != '_') continue;
    for (const auto* d : idx.lookup(std::string_view(c.symbol).substr(0, i))) {
      if (d->language != "triton") continue;
      by_prefix[d->symbol].push_back(d);
      if (triton_signature_suffix(std::string_view(c.symbol).substr(i + 1))) specialised = d->symbol;
    }
  }
  if (by_prefix.empty()) return m;
  std::set<std::string> prefixes;
  for (const auto& [p, defs] : by_prefix) prefixes.insert(p);
  if (!specialised.empty()) {
    m.defs = by_prefix[specialised];
    m.confidence = 0.95;
    m.notes.push_back("Triton specialisation suffix '" + c.symbol.substr(specialised.size()) + "' removed");
    return m;
  }
  for (const auto& [p, defs] : by_prefix) m.defs.insert(m.defs.end(), defs.begin(), defs.end());
  m.notes.push_back("matched by name prefix " + join(std::vector<std::string>(prefixes.begin(), prefixes.end()), ","));
  m.distinct_names = prefixes.size() > 1;
  if (prefixes.size() == 1) {
    const std::string& stem = *prefixes.begin();
    m.confidence = 0.3;
    m.notes.push_back("suffix '" + c.symbol.substr(stem.size()) + "' is not one Triton or Inductor adds: this may be "
                      "a different kernel");
    m.alternatives = triton_siblings(idx, stem, prefixes);
  }
  return m;
}

void narrow(const kernel_class& c, const parsed_kernel_name& n, const repo_index& idx, match_state* m) {
  auto& defs = m->defs;
  if (!keep_if_any(&defs, [](const kernel_definition& d) { return d.is_definition; })) {
    m->confidence *= 0.5;
    m->notes.emplace_back("only declarations found");
  }
  collapse_identical(m);
  // A demangled C++ name spells its namespaces in full: none means the global namespace.
  bool namespace_matched = true;
  if (c.mode == lookup_mode::cpp && !n.name_only) {
    namespace_matched = keep_if_any(&defs, [&](const kernel_definition& d) { return d.scopes == c.scopes; });
    if (!namespace_matched) {
      m->confidence *= 0.6;
      m->notes.push_back("namespace " + (c.scopes.empty() ? std::string("(global)") : join(c.scopes, "::")) +
                         " not matched");
    }
  } else if (c.mode == lookup_mode::cpp) {
    namespace_matched = keep_if_any(&defs, [&](const kernel_definition& d) { return d.scopes == c.scopes; });
    if (!namespace_matched) m->refused = true;  // only the qualified name is known: it must match
    if (!namespace_matched) m->notes.emplace_back("namespace " + join(c.scopes, "::") + " not matched");
  }
  narrow_by_signature(n, m);
  if (!namespace_matched && (m->fit == signature_fit::extends || m->fit == signature_fit::differs)) m->refused = true;
  if (c.param_count >= 0)
    keep_if_any(&defs, [&](const kernel_definition& d) { return d.param_count == c.param_count; });
  if (defs.size() > 1 && contains(c.return_type, "enable_if")) {
    std::string want = logic_signature(c.return_type);
    size_t before = defs.size();
    keep_if_any(&defs, [&](const kernel_definition& d) {
      return contains(d.return_type, "enable_if") && logic_signature(d.return_type) == want;
    });
    if (defs.size() < before) m->notes.emplace_back("overload chosen by its enable_if condition");
  }
  prefer_primary(idx, m);
}

}  // namespace magpie::source
