// Repository walk and symbol table (see repo_index.h).
#include "source/repo_index.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <system_error>

#include "core/log.h"
#include "core/progress.h"
#include "core/strings.h"

namespace magpie::source {
namespace {

constexpr uintmax_t k_max_file_bytes = 16u << 20;  // larger sources are generated blobs

bool skipped_dir(const std::string& name) {
  static const std::set<std::string> k = {".git", "__pycache__", "node_modules", "build", "dist", ".tox",
                                          ".eggs", "venv", ".venv", ".mypy_cache", ".pytest_cache"};
  return k.count(name) > 0;
}

/// "cuda" | "hip" | "cpp" | "python" | "" (not scanned).
const char* language_of(const fs::path& p) {
  std::string ext = to_lower(p.extension().string());
  if (ext == ".cu" || ext == ".cuh") return "cuda";
  if (ext == ".hip") return "hip";
  if (ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".h" || ext == ".hpp" || ext == ".hxx" ||
      ext == ".inl" || ext == ".cuinc")
    return "cpp";
  if (ext == ".py") return "python";
  return "";
}

}  // namespace

std::string root_variable_for(const fs::path& root) {
  fs::path p = root;
  while (!p.empty() && p.filename().empty()) p = p.parent_path();
  std::string name = p.filename().string();
  std::string v = "$";
  for (char c : name) v += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : '_';
  return v + "_DIR";
}

void repo_index::add_definition(kernel_definition d) {
  m_by_symbol[d.symbol].push_back(m_defs.size());
  m_defs.push_back(std::move(d));
  m_stats.definitions = m_defs.size();
}

void repo_index::add_file(size_t root, const fs::path& rel, std::string_view text) {
  const char* lang = language_of(rel);
  std::vector<kernel_definition> found;
  if (std::string_view(lang) == "python") {
    if (contains(text, "jit")) scan_python_source(text, &found);
  } else if (*lang && contains(text, "__global__")) {
    scan_cpp_source(text, &found);
    for (auto& d : found) d.language = lang;
    if (contains(text, "define"))
      for (auto& m : scan_cpp_kernel_macros(text)) m_macros.push_back({std::move(m), root, rel});
    m_stats.kernel_macros = m_macros.size();
  }
  for (auto& d : found) {
    d.root = root;
    d.rel_path = rel;
    if (!d.macro.empty()) {
      d.macro_root = root;
      d.macro_rel = rel;
    }
    add_definition(std::move(d));
  }
}

void repo_index::expand_cross_file_macros() {
  if (m_macros.empty()) return;
  for (const auto& [root, rel] : m_cpp_files) {
    auto text = read_file(m_roots[root] / rel);
    if (!text.ok()) continue;
    std::vector<kernel_macro> foreign;
    std::vector<const located_macro*> origin;
    for (const auto& lm : m_macros) {
      if ((lm.root == root && lm.rel == rel) || !contains(*text, lm.macro.name)) continue;
      foreign.push_back(lm.macro);
      origin.push_back(&lm);
    }
    if (foreign.empty()) continue;
    std::vector<kernel_definition> found;
    scan_cpp_macro_uses(*text, foreign, &found);
    for (auto& d : found) {
      d.root = root;
      d.rel_path = rel;
      d.language = language_of(rel);
      d.macro_root = origin[d.macro_ref]->root;
      d.macro_rel = origin[d.macro_ref]->rel;
      add_definition(std::move(d));
    }
  }
}

status_or<repo_index> repo_index::build(const std::vector<fs::path>& roots) {
  repo_index idx;
  std::set<std::string> used_vars;
  for (const auto& r : roots) {
    std::error_code ec;
    fs::path abs = absolute_path(r);
    if (!fs::exists(abs, ec)) return not_found("kernel source root '%s' does not exist", r.c_str());
    if (!fs::is_directory(abs, ec)) return invalid_argument("kernel source root '%s' is not a directory", r.c_str());
    std::string base = root_variable_for(abs), var = base;
    for (int k = 2; used_vars.count(var); ++k) var = base.substr(0, base.size() - 4) + "_" + std::to_string(k) + "_DIR";
    used_vars.insert(var);
    idx.m_roots.push_back(abs);
    idx.m_vars.push_back(var);
    idx.m_tests.emplace_back();
  }
  progress_bar bar("indexing kernel sources", 0);
  for (size_t ri = 0; ri < idx.m_roots.size(); ++ri) {
    const fs::path& root = idx.m_roots[ri];
    bar.set_note(root.filename().string());
    std::error_code ec;
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
    if (ec) return io_error("cannot list '%s': %s", root.c_str(), ec.message().c_str());
    for (; it != end; it.increment(ec)) {
      if (ec) {
        MAGPIE_LOG_WARN("indexing %s: %s", root.c_str(), ec.message().c_str());
        ec.clear();
        continue;
      }
      const fs::directory_entry& e = *it;
      if (e.is_directory(ec)) {
        if (skipped_dir(e.path().filename().string())) it.disable_recursion_pending();
        continue;
      }
      if (!e.is_regular_file(ec) || !*language_of(e.path())) continue;
      ++idx.m_stats.files_scanned;
      bar.advance();
      if (e.file_size(ec) > k_max_file_bytes) {
        ++idx.m_stats.files_skipped_large;
        continue;
      }
      auto text = read_file(e.path());
      if (!text.ok()) {
        MAGPIE_LOG_WARN("indexing: %s", text.get_status().message().c_str());
        continue;
      }
      ++idx.m_stats.files_read;
      idx.m_stats.bytes_read += text->size();
      fs::path rel = fs::relative(e.path(), root, ec);
      std::string fname = rel.filename().string();
      if (ends_with(fname, ".py") && (starts_with(fname, "test_") || ends_with(fname, "_test.py")))
        idx.m_tests[ri].push_back(rel);
      if (std::string_view(language_of(rel)) != "python") idx.m_cpp_files.emplace_back(ri, rel);
      idx.add_file(ri, rel, *text);
    }
  }
  idx.expand_cross_file_macros();
  bar.finish();
  for (auto& t : idx.m_tests) std::sort(t.begin(), t.end());
  MAGPIE_LOG_DEBUG("kernel index: %zu files, %zu definitions", idx.m_stats.files_read, idx.m_defs.size());
  return idx;
}

std::vector<kernel_definition> repo_index::find_named(const std::set<std::string>& names) const {
  std::vector<kernel_definition> out;
  if (names.empty()) return out;
  for (const auto& [root, rel] : m_cpp_files) {
    auto text = read_file(m_roots[root] / rel);
    if (!text.ok()) continue;
    bool any = false;
    for (const auto& n : names) any = any || text->find(n) != std::string::npos;
    if (!any) continue;
    std::vector<kernel_definition> found;
    scan_cpp_named(*text, names, &found);
    for (auto& d : found) {
      d.root = root;
      d.rel_path = rel;
      d.language = language_of(rel);
      out.push_back(std::move(d));
    }
  }
  return out;
}

std::vector<const kernel_definition*> repo_index::lookup(std::string_view symbol) const {
  std::vector<const kernel_definition*> out;
  auto it = m_by_symbol.find(std::string(symbol));
  if (it == m_by_symbol.end()) return out;
  for (size_t i : it->second) out.push_back(&m_defs[i]);
  return out;
}

}  // namespace magpie::source
