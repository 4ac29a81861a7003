// find_kernel_sources: classification + index lookup + fail-closed resolution (see
// kernel_sources.h and docs/source-mapping.md for the rules and confidence values).
#include "source/kernel_sources.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "core/strings.h"
#include "source/classify.h"
#include "source/git_info.h"
#include "source/kernel_name.h"
#include "source/refs.h"
#include "source/repo_index.h"

namespace magpie::source {
namespace {

void add_note(kernel_source_info* info, const std::string& note) {
  if (note.empty()) return;
  info->notes += (info->notes.empty() ? "" : "; ") + note;
}

std::string location(const repo_index& idx, const kernel_definition& d) {
  return idx.root_variable(d.root) + "/" + d.rel_path.generic_string() + ":" + std::to_string(d.line);
}

bool mode_accepts(lookup_mode m, const kernel_definition& d) {
  if (m == lookup_mode::python) return d.language == "triton";
  if (m == lookup_mode::cpp) return d.language != "triton";
  return m == lookup_mode::any;
}

struct match_state {
  std::vector<const kernel_definition*> defs;
  double confidence = 1.0;
  std::vector<std::string> notes;
  std::vector<const kernel_definition*> alternatives;  ///< other kernels the name could mean
  bool distinct_names = false;  ///< several different indexed names match: ambiguous even in one file
};

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

/// Exact symbol matches; for Triton-capable lookups, else a token-boundary prefix
/// ("<indexed>_<suffix>"). A suffix Triton adds (triton_signature_suffix) is as good as exact
/// (0.95); any other suffix resolves only when one prefix is left, at 0.3, with the kernels
/// sharing the stem listed as alternatives; several prefixes → ambiguous.
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

/// Evidence filters that never pick among equals: definitions over declarations, identical
/// copies collapsed, exact namespace, parameter count.
void narrow(const kernel_class& c, match_state* m) {
  auto& defs = m->defs;
  auto keep_if_any = [&](auto pred) {
    std::vector<const kernel_definition*> kept;
    for (const auto* d : defs) if (pred(*d)) kept.push_back(d);
    if (kept.empty()) return false;
    defs.swap(kept);
    return true;
  };
  if (!keep_if_any([](const kernel_definition& d) { return d.is_definition; })) {
    m->confidence *= 0.5;
    m->notes.emplace_back("only declarations found");
  }
  // Identical copies (same body) are one definition: keep the one not embedded in a string,
  // then the shortest path.
  std::stable_sort(defs.begin(), defs.end(), [](const kernel_definition* a, const kernel_definition* b) {
    if (a->in_string != b->in_string) return !a->in_string;
    auto la = a->rel_path.generic_string().size(), lb = b->rel_path.generic_string().size();
    if (la != lb) return la < lb;
    return std::tie(a->root, a->rel_path, a->line) < std::tie(b->root, b->rel_path, b->line);
  });
  std::set<std::pair<std::string, uint64_t>> seen;
  std::vector<const kernel_definition*> unique;
  size_t copies = 0;
  for (const auto* d : defs) {
    if (d->body_hash != 0 && !seen.insert({d->symbol, d->body_hash}).second) { ++copies; continue; }
    unique.push_back(d);
  }
  if (copies > 0) m->notes.push_back(strprintf("%zu identical cop%s ignored", copies, copies == 1 ? "y" : "ies"));
  defs.swap(unique);
  // A demangled C++ name spells its namespaces in full: none means the global namespace.
  if (c.mode == lookup_mode::cpp) {
    if (!keep_if_any([&](const kernel_definition& d) { return d.scopes == c.scopes; })) {
      m->confidence *= 0.6;
      m->notes.push_back("namespace " + (c.scopes.empty() ? std::string("(global)") : join(c.scopes, "::")) +
                         " not matched");
    }
  }
  if (c.param_count >= 0) keep_if_any([&](const kernel_definition& d) { return d.param_count == c.param_count; });
  if (defs.size() > 1 && contains(c.return_type, "enable_if")) {
    std::string want = logic_signature(c.return_type);
    size_t before = defs.size();
    keep_if_any([&](const kernel_definition& d) {
      return contains(d.return_type, "enable_if") && logic_signature(d.return_type) == want;
    });
    if (defs.size() < before) m->notes.emplace_back("overload chosen by its enable_if condition");
  }
}

void resolve_one(const parsed_kernel_name& n, const kernel_class& c, const repo_index& idx, test_file_cache& tests,
                 kernel_source_info* info) {
  match_state m = candidates_for(c, idx);
  std::string prefix = error_prefix(c.kind);
  std::string err_base = prefix.empty() ? "source" : prefix + "_source";
  if (m.defs.empty()) {
    info->source_resolution = "unresolved";
    info->source_error = err_base + "_not_found";
    add_note(info, "no definition of '" + c.symbol + "' in the given roots; " + c.repo_hint);
    return;
  }
  narrow(c, &m);
  std::map<std::pair<size_t, std::string>, std::vector<const kernel_definition*>> by_file;
  for (const auto* d : m.defs) by_file[{d->root, d->rel_path.generic_string()}].push_back(d);
  for (const auto* d : m.defs) info->candidates.push_back(location(idx, *d));
  std::set<std::string> langs;
  for (const auto* d : m.defs) langs.insert(d->language == "triton" ? "triton" : "cpp");
  if (info->kind == "unknown" && langs.size() == 1) info->kind = *langs.begin() == "triton" ? "triton_jit" : "cuda_cpp";
  for (const auto& note : m.notes) add_note(info, note);
  if (by_file.size() > 1 || m.distinct_names) {
    info->source_resolution = "unresolved";
    prefix = error_prefix(info->kind);
    info->source_error = (prefix.empty() ? "source" : prefix + "_source") + "_ambiguous";
    add_note(info, strprintf("%zu definitions in %zu files: %s", m.defs.size(), by_file.size(),
                             join(info->candidates, ", ").c_str()));
    return;
  }
  auto& same_file = by_file.begin()->second;
  std::sort(same_file.begin(), same_file.end(), [](auto* a, auto* b) { return a->line < b->line; });
  const kernel_definition& d = *same_file.front();
  if (same_file.size() > 1) {
    m.confidence *= 0.8;
    std::vector<std::string> others;
    for (size_t i = 1; i < same_file.size(); ++i) others.push_back(std::to_string(same_file[i]->line));
    add_note(info, "same file also defines it at line " + join(others, ","));
  }
  if (info->kind == "unknown" || (info->kind == "triton_jit" && d.inductor)) info->kind = d.inductor ? "inductor" : "triton_jit";
  if (d.language == "hip" && info->kind == "cuda_cpp") info->kind = "hip_cpp";
  info->source_resolution = "resolved";
  info->source_error.clear();
  info->source_repo = idx.roots()[d.root].filename().string();
  info->source_file = location(idx, d);
  info->file = idx.roots()[d.root] / d.rel_path;
  info->line = d.line;
  info->confidence = m.confidence;
  info->upstream_url = upstream_url(idx.roots()[d.root], d.rel_path, d.line);
  info->definition_kind = !d.macro.empty() ? "macro_expansion" : d.is_definition ? "definition" : "declaration";
  if (!d.macro.empty()) {
    std::string at = idx.root_variable(d.macro_root) + "/" + d.macro_rel.generic_string() + ":" +
                     std::to_string(d.macro_line);
    info->macro_definition = d.macro + "=" + at;
    add_note(info, "defined by expanding macro " + d.macro + " (#define at " + at + ")");
  }
  for (const auto* a : m.alternatives) info->alternatives.push_back(a->symbol + "=" + location(idx, *a));
  if (!info->alternatives.empty()) add_note(info, "alternatives: " + join(info->alternatives, ", "));
  route_test(d, idx, tests, info);
  (void)n;
}

kernel_source_info map_one(const std::string& name, const parsed_kernel_name& n, const repo_index* idx,
                           test_file_cache* tests) {
  kernel_source_info info;
  info.name = name;
  kernel_class c = classify_kernel(n);
  info.kind = c.kind;
  info.category = c.category;
  info.demangled = n.is_cpp_signature ? n.normalized : n.demangled;
  info.symbol = c.symbol;
  info.notes = join(c.notes, "; ");
  if (c.mode == lookup_mode::none) {
    info.source_resolution = "unsupported";
    info.source_error = c.unsupported_error;
  } else if (idx == nullptr) {
    info.source_resolution = "unresolved";
    info.source_error = "no_repo_for_kind";
    add_note(&info, c.repo_hint);
  } else {
    resolve_one(n, c, *idx, *tests, &info);
    if (info.kind != "triton_jit" && info.kind != "inductor") {
      std::vector<std::string> names{c.symbol};
      for (const auto& f : n.functors) names.push_back(f.substr(f.rfind(':') == std::string::npos ? 0 : f.rfind(':') + 1));
      find_triton_reference(names, info.category, *idx, &info);
    }
  }
  if (info.baseline_ref_kind.empty()) info.baseline_ref_kind = "none";
  return info;
}

std::string last_component(const std::string& q) {
  size_t p = q.rfind("::");
  return p == std::string::npos ? q : q.substr(p + 2);
}

/// "$VAR/rel:line" → ("$VAR/rel", line).
std::pair<std::string, int> split_location(const std::string& loc) {
  size_t c = loc.rfind(':');
  if (c == std::string::npos) return {loc, 0};
  return {loc.substr(0, c), static_cast<int>(parse_int(loc.substr(c + 1)).value_or(0))};
}

/// An anonymous-namespace kernel template can only be instantiated inside its own translation
/// unit. When it is ambiguous across files but instantiated with a lambda/functor whose
/// definition was located in exactly one of those files, that file is the evidence.
void disambiguate_by_translation_unit(const parsed_kernel_name& n, const repo_index& idx, kernel_source_info* info) {
  if (!ends_with(info->source_error, "_source_ambiguous")) return;
  if (std::find(n.scopes.begin(), n.scopes.end(), "(anonymous namespace)") == n.scopes.end()) return;
  std::set<std::string> evidence;
  for (const auto& fs_entry : info->functor_sources) {
    std::string loc = fs_entry.substr(fs_entry.find('=') + 1);
    if (!loc.empty()) evidence.insert(split_location(loc).first);
  }
  std::vector<std::string> hits;
  for (const auto& c : info->candidates)
    if (evidence.count(split_location(c).first)) hits.push_back(c);
  if (hits.size() != 1) return;
  auto [file, line] = split_location(hits[0]);
  std::string var = file.substr(0, file.find('/'));
  for (size_t r = 0; r < idx.roots().size(); ++r) {
    if (idx.root_variable(r) != var) continue;
    fs::path rel = file.substr(var.size() + 1);
    info->source_resolution = "resolved";
    info->source_error.clear();
    info->source_repo = idx.roots()[r].filename().string();
    info->source_file = hits[0];
    info->file = idx.roots()[r] / rel;
    info->line = line;
    info->confidence = 0.9;
    info->upstream_url = upstream_url(idx.roots()[r], rel, line);
    info->definition_kind = "definition";
    add_note(info, "disambiguated by translation unit: the anonymous-namespace kernel is instantiated with a functor "
                   "defined in " + file);
    return;
  }
}

/// Locates the functors of every C++ kernel in one pass over the index's files.
void locate_functors(const std::vector<parsed_kernel_name>& parsed, const repo_index& idx,
                     std::vector<kernel_source_info>* out) {
  std::set<std::string> wanted;
  for (const auto& n : parsed)
    for (const auto& f : n.functors) wanted.insert(last_component(f));
  std::vector<kernel_definition> defs = idx.find_named(wanted);
  for (size_t i = 0; i < parsed.size(); ++i) {
    for (const auto& f : parsed[i].functors) {
      std::string base = last_component(f);
      std::vector<std::string> scopes;
      if (f.size() > base.size() + 2) {
        std::string q = f.substr(0, f.size() - base.size() - 2);
        for (size_t p = 0;;) {
          size_t nx = q.find("::", p);
          scopes.push_back(q.substr(p, nx == std::string::npos ? nx : nx - p));
          if (nx == std::string::npos) break;
          p = nx + 2;
        }
      }
      std::set<std::string> exact, any;
      for (const auto& d : defs) {
        if (d.symbol != base) continue;
        std::string loc = location(idx, d);
        any.insert(loc);
        if (d.scopes == scopes) exact.insert(loc);
      }
      const auto& pick = exact.empty() ? any : exact;
      std::string entry = f + "=" + (pick.size() == 1 ? *pick.begin() : "");
      (*out)[i].functor_sources.push_back(entry);
      auto& notes = (*out)[i].notes;
      std::string plain = "functor: " + f;
      std::string located = pick.size() == 1 ? "functor " + f + " at " + *pick.begin()
                            : pick.size() > 1 ? strprintf("functor %s: %zu definitions", f.c_str(), pick.size())
                                              : plain;
      if (size_t p = notes.find(plain); p != std::string::npos && (p + plain.size() == notes.size() || notes[p + plain.size()] == ';'))
        notes.replace(p, plain.size(), located);
      else if (located != plain)
        add_note(&(*out)[i], located);
    }
    disambiguate_by_translation_unit(parsed[i], idx, &(*out)[i]);
  }
}

}  // namespace

const std::vector<std::string>& kernel_source_csv_columns() {
  static const std::vector<std::string> k = {"kind",          "category",         "source_repo",
                                             "source_file",   "upstream_url",     "test_file",
                                             "test_cmd",      "baseline_ref_file", "baseline_ref_symbol",
                                             "baseline_ref_kind", "triton_ref_file", "triton_ref_symbol",
                                             "notes",         "source_resolution", "source_error"};
  return k;
}

std::vector<std::string> kernel_source_csv_row(const kernel_source_info& i) {
  return {i.kind,          i.category,          i.source_repo,         i.source_file,       i.upstream_url,
          i.test_file,     i.test_cmd,          i.baseline_ref_file,   i.baseline_ref_symbol, i.baseline_ref_kind,
          i.triton_ref_file, i.triton_ref_symbol, i.notes,             i.source_resolution, i.source_error};
}

status_or<std::vector<kernel_source_info>> find_kernel_sources(const std::vector<std::string>& kernel_names,
                                                                const std::vector<fs::path>& repo_roots) {
  std::optional<repo_index> idx;
  if (!repo_roots.empty()) {
    MAGPIE_ASSIGN_OR_RETURN(repo_index built, repo_index::build(repo_roots));
    idx.emplace(std::move(built));
  }
  std::optional<test_file_cache> tests;
  if (idx) tests.emplace(*idx);
  std::vector<parsed_kernel_name> parsed;
  parsed.reserve(kernel_names.size());
  for (const auto& name : kernel_names) parsed.push_back(parse_kernel_name(name));
  std::vector<kernel_source_info> out;
  out.reserve(kernel_names.size());
  for (size_t i = 0; i < kernel_names.size(); ++i)
    out.push_back(map_one(kernel_names[i], parsed[i], idx ? &*idx : nullptr, tests ? &*tests : nullptr));
  if (idx) locate_functors(parsed, *idx, &out);
  return out;
}

std::vector<std::string> kernel_source_csv_preamble(const std::vector<fs::path>& repo_roots,
                                                    const std::string& first_column, const std::string& last_column) {
  std::vector<std::string> lines;
  if (repo_roots.empty()) return lines;
  std::vector<fs::path> abs;
  for (const auto& r : repo_roots) abs.push_back(absolute_path(r));
  fs::path base = abs[0].parent_path();
  for (const auto& p : abs) {
    while (!base.empty() && base != base.root_path() &&
           !starts_with(p.generic_string() + "/", base.generic_string() + "/"))
      base = base.parent_path();
  }
  lines.push_back("# Repository Path Mappings:");
  lines.push_back("# Base directory: " + base.generic_string());
  std::set<std::string> used;
  for (const auto& p : abs) {
    std::string var = root_variable_for(p), v = var;
    for (int k = 2; used.count(v); ++k) v = var.substr(0, var.size() - 4) + "_" + std::to_string(k) + "_DIR";
    used.insert(v);
    std::error_code ec;
    lines.push_back("# " + v + "=./" + fs::relative(p, base, ec).generic_string());
  }
  lines.push_back("#");
  lines.push_back("# Warning: columns " + first_column + "-" + last_column + " from find_kernel_sources are experimental.");
  return lines;
}

}  // namespace magpie::source
