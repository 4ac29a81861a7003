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
#include "source/match.h"
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

/// Is root/rel inside library `lib`: the root's name contains it, or a folder of rel is named so?
bool inside_library(const fs::path& root, const fs::path& rel, const std::string& lib) {
  if (contains(to_lower(root.filename().string()), lib)) return true;
  for (const auto& part : rel.parent_path())
    if (to_lower(part.string()) == lib) return true;
  return false;
}

void report_refused(const parsed_kernel_name& n, const kernel_class& c, const repo_index& idx, const match_state& m,
                    const std::string& err_base, kernel_source_info* info) {
  std::vector<std::string> near;
  for (const auto* d : m.defs) near.push_back(location(idx, *d));
  info->source_resolution = "unresolved";
  info->source_error = err_base + "_not_found";
  for (const auto& note : m.notes) add_note(info, note);
  add_note(info, "not reported as a match: " + join(near, ", ") + (near.size() == 1 ? " differs" : " differ") +
                     " from the trace in namespace" + (n.name_only ? "" : " and signature") +
                     " (another project's kernel of that name?); " + c.repo_hint);
}

/// The kind once the definition is known: a plain name becomes Triton or C++, HIP files make
/// hip_cpp, ATen's tree makes aten_native.
void refine_kind(const kernel_definition& d, kernel_source_info* info) {
  if (info->kind == "unknown" || (info->kind == "triton_jit" && d.inductor))
    info->kind = d.language == "triton" ? (d.inductor ? "inductor" : "triton_jit") : "cuda_cpp";
  if (d.language == "hip" && info->kind == "cuda_cpp") info->kind = "hip_cpp";
  // A kernel without ATen types in its name (a global anonymous-namespace softmax) is still ATen's.
  if (info->kind == "cuda_cpp" && starts_with(d.rel_path.generic_string(), "aten/src/ATen/"))
    info->kind = "aten_native";
}

/// Fills the location columns for definition `d` at `confidence`: resolved, or a candidate below
/// the threshold.
void report_match(const repo_index& idx, const kernel_definition& d, const match_state& m, double confidence,
                  kernel_source_info* info) {
  info->source_resolution = confidence + 1e-9 >= k_min_resolved_confidence ? "resolved" : "candidate";
  info->source_error = info->source_resolution == "resolved" ? "" : "below_confidence_threshold";
  info->source_repo = idx.roots()[d.root].filename().string();
  info->source_file = location(idx, d);
  info->matched_symbol = d.symbol;
  info->file = idx.roots()[d.root] / d.rel_path;
  info->line = d.line;
  info->confidence = confidence;
  info->upstream_url = upstream_url(idx.roots()[d.root], d.rel_path, d.line);
  info->definition_kind = !d.macro.empty() ? "macro_expansion" : d.is_definition ? "definition" : "declaration";
  if (!d.macro.empty()) {
    std::string at = idx.root_variable(d.macro_root) + "/" + d.macro_rel.generic_string() + ":" +
                     std::to_string(d.macro_line);
    info->macro_definition = d.macro + "=" + at;
    add_note(info, "defined by expanding macro " + d.macro + " (#define at " + at + ")");
  }
  for (const auto* a : m.alternatives) info->alternatives.push_back(a->symbol + "=" + location(idx, *a));
  if (!info->alternatives.empty() && !contains(info->notes, "primary definition preferred"))
    add_note(info, "alternatives: " + join(info->alternatives, ", "));
  if (info->source_resolution == "candidate")
    add_note(info, strprintf("confidence %.2f is below %.2f: a candidate to check, not a resolved answer",
                             info->confidence, k_min_resolved_confidence));
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
  narrow(c, n, idx, &m);
  if (m.refused) return report_refused(n, c, idx, m, err_base, info);
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
  refine_kind(d, info);
  if (!c.shared_with.empty() && !inside_library(idx.roots()[d.root], d.rel_path, c.shared_with)) {
    m.confidence = std::min(m.confidence, 0.6);
    add_note(info,
             "matched by a name " + c.shared_with + " also uses, outside " + c.shared_with + ": confidence capped");
  }
  report_match(idx, d, m, m.confidence, info);
  route_test(d, idx, tests, info);
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

/// Marks `info` resolved to candidate location `loc` ("$VAR/rel:line") with `confidence`.
void resolve_to_candidate(const repo_index& idx, const std::string& loc, double confidence, const std::string& note,
                          kernel_source_info* info) {
  auto [file, line] = split_location(loc);
  std::string var = file.substr(0, file.find('/'));
  for (size_t r = 0; r < idx.roots().size(); ++r) {
    if (idx.root_variable(r) != var) continue;
    fs::path rel = file.substr(var.size() + 1);
    info->source_resolution = "resolved";
    info->source_error.clear();
    info->source_repo = idx.roots()[r].filename().string();
    info->source_file = loc;
    info->file = idx.roots()[r] / rel;
    info->line = line;
    info->confidence = confidence;
    info->upstream_url = upstream_url(idx.roots()[r], rel, line);
    info->definition_kind = "definition";
    add_note(info, note);
    return;
  }
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
  resolve_to_candidate(idx, hits[0], 0.9,
                       "disambiguated by translation unit: the anonymous-namespace kernel is instantiated with a "
                       "functor defined in " + split_location(hits[0]).first,
                       info);
}

/// A module that another kernel of the batch matched only loosely by name prefix (vLLM's
/// kernel_unified_attention for a trace's kernel_unified_attention_2d, a 0.3 candidate) is another
/// version or copy of what ran: exact Triton matches into that file of names outside that stem are
/// lowered to candidates (aiter's reduce_segments ran, not vLLM's). Names of the stem itself
/// (kernel_unified_attention_3d defined there) and Triton-suffix matches are not affected.
void distrust_prefix_matched_modules(std::vector<kernel_source_info>* out) {
  struct loose_match {
    std::string name, stem;
  };
  std::map<std::string, loose_match> loose;  // "$VAR/rel" → the trace name matched there by prefix
  for (const auto& k : *out)
    if (k.source_resolution == "candidate" && !k.matched_symbol.empty() && k.matched_symbol != k.symbol)
      loose.emplace(split_location(k.source_file).first, loose_match{k.symbol, k.matched_symbol});
  for (auto& k : *out) {
    if (k.source_resolution != "resolved" || k.matched_symbol != k.symbol || k.kind != "triton_jit") continue;
    auto it = loose.find(split_location(k.source_file).first);
    if (it == loose.end() || starts_with(k.symbol, it->second.stem)) continue;
    k.confidence = std::min(k.confidence, 0.6);
    k.source_resolution = "candidate";
    k.source_error = "below_confidence_threshold";
    add_note(&k, "lowered to a candidate: " + it->second.name + " of the same trace matches this module only by "
                 "name prefix, so the module that ran is another version or copy of it");
  }
}

/// Ambiguous Triton kernels: when exactly one candidate file is a module where at least two other
/// kernels of the same batch resolved exactly, that module ran and the kernel is its (aiter's
/// reduce_segments beside its kernel_unified_attention_2d and _3d). One neighbour is not enough:
/// generic names (`_fwd_kernel`) sit in many modules.
void disambiguate_by_module(const repo_index& idx, std::vector<kernel_source_info>* out) {
  std::map<std::string, std::vector<std::string>> resolved_in;  // "$VAR/rel" → kernels resolved there
  for (const auto& k : *out)
    if (k.source_resolution == "resolved" && k.kind == "triton_jit" && k.confidence >= 1.0 &&
        k.matched_symbol == k.symbol)
      resolved_in[split_location(k.source_file).first].push_back(k.symbol);
  for (auto& k : *out) {
    if (k.source_error != "triton_source_ambiguous") continue;
    std::vector<std::string> hits;
    for (const auto& c : k.candidates) {
      auto it = resolved_in.find(split_location(c).first);
      if (it != resolved_in.end() && it->second.size() >= 2) hits.push_back(c);
    }
    if (hits.size() != 1) continue;
    std::string file = split_location(hits[0]).first;
    resolve_to_candidate(idx, hits[0], 0.85,
                         "disambiguated by module: " + join(resolved_in[file], ", ") + " of the same trace resolved to " +
                             file,
                         &k);
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
  if (idx) {
    locate_functors(parsed, *idx, &out);
    disambiguate_by_module(*idx, &out);
    distrust_prefix_matched_modules(&out);
  }
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
