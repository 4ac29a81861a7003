// Test routing, eager-baseline and Triton-reference lookup (see refs.h).
#include "source/refs.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "core/strings.h"

namespace magpie::source {
namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool contains_word(const std::string& text, const std::string& w) {
  if (w.empty()) return false;
  for (size_t p = text.find(w); p != std::string::npos; p = text.find(w, p + 1)) {
    bool left = p == 0 || !word_char(text[p - 1]);
    bool right = p + w.size() >= text.size() || !word_char(text[p + w.size()]);
    if (left && right) return true;
  }
  return false;
}

/// Upstream Magpie's baseline priority: run_torch > ref_* > torch_* > naive_* > *_native >
/// check_*_allclose > test_*; lower is better, -1 = not a reference.
int baseline_priority(const std::string& fn) {
  if (fn == "run_torch") return 0;
  if (starts_with(fn, "ref_")) return 1;
  if (starts_with(fn, "torch_")) return 2;
  if (starts_with(fn, "naive_")) return 3;
  if (ends_with(fn, "_native")) return 4;
  if (starts_with(fn, "check_") && ends_with(fn, "_allclose")) return 5;
  if (starts_with(fn, "test_")) return 6;
  return -1;
}

const std::set<std::string>& stop_words() {
  static const std::set<std::string> k = {"kernel", "fused", "op", "ops", "k", "v", "d", "the", "void", "at",
                                          "native", "cuda", "impl", "triton", "fwd", "launch", "0", "1", "2"};
  return k;
}

std::set<std::string> dtype_set(const std::vector<std::string>& toks) {
  static const std::set<std::string> k = {"bf16", "fp16", "fp32", "fp4", "fp8", "int8", "int4", "half", "bfloat16"};
  std::set<std::string> out;
  for (const auto& t : toks) if (k.count(t)) out.insert(t == "half" ? "fp16" : t == "bfloat16" ? "bf16" : t);
  return out;
}

}  // namespace

std::vector<std::string> name_tokens(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) out.push_back(to_lower(cur));
    cur.clear();
  };
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (!std::isalnum(static_cast<unsigned char>(c))) { flush(); continue; }
    bool upper = std::isupper(static_cast<unsigned char>(c));
    bool prev_lower = i > 0 && std::islower(static_cast<unsigned char>(s[i - 1]));
    if (upper && prev_lower) flush();
    cur += c;
  }
  flush();
  return out;
}

const std::string& test_file_cache::text(size_t root, const fs::path& rel) {
  auto key = std::make_pair(root, rel.string());
  auto it = m_text.find(key);
  if (it != m_text.end()) return it->second;
  auto t = read_file(m_idx.roots()[root] / rel);
  return m_text[key] = t.ok() ? std::move(*t) : std::string();
}

std::vector<fs::path> test_file_cache::mentioning(size_t root, const std::string& needle) {
  std::vector<fs::path> out;
  for (const auto& rel : m_idx.test_files(root)) {
    if (contains_word(text(root, rel), needle)) out.push_back(rel);
  }
  return out;
}

void route_test(const kernel_definition& d, const repo_index& idx, test_file_cache& cache, kernel_source_info* info) {
  // The kernel's own name first, then (Python) its module path as tests import it.
  std::vector<fs::path> hits = cache.mentioning(d.root, d.symbol);
  std::string how = "mentions " + d.symbol;
  if (hits.empty() && d.language == "triton") {
    fs::path mod = d.rel_path;
    mod.replace_extension();
    std::string dotted = replace_all(mod.generic_string(), "/", ".");
    hits = cache.mentioning(d.root, dotted);
    how = "imports " + dotted;
  }
  if (hits.empty()) return;
  if (hits.size() > 1) {
    info->notes += (info->notes.empty() ? "" : "; ") +
                   strprintf("%zu test files %s (not chosen)", hits.size(), how.c_str());
    return;
  }
  const std::string& var = idx.root_variable(d.root);
  info->test_file = var + "/" + hits[0].generic_string();
  info->test_cmd = "cd " + var + " && python -m pytest -q " + hits[0].generic_string();
  // Baseline reference: the best-priority top-level def in the test file.
  const std::string& text = cache.text(d.root, hits[0]);
  int best = 99;
  std::string best_fn;
  bool perftest = false, prev_perftest = false;
  for (const auto& raw : split(text, '\n')) {
    std::string_view line = raw;
    if (starts_with(line, "@perftest")) { prev_perftest = true; continue; }
    if (starts_with(line, "def ")) {
      std::string fn;
      for (size_t i = 4; i < line.size() && word_char(line[i]); ++i) fn += line[i];
      int p = baseline_priority(fn);
      if (p >= 0 && p < best) {
        best = p;
        best_fn = fn;
        perftest = prev_perftest;
      }
    }
    if (!trim(line).empty() && !starts_with(line, "@")) prev_perftest = false;
  }
  if (best_fn.empty()) {
    info->baseline_ref_kind = "none";
    return;
  }
  info->baseline_ref_file = info->test_file;
  info->baseline_ref_symbol = best_fn;
  info->baseline_ref_kind = best == 6 ? "inline_in_test" : perftest ? "perftest_wrapper" : "eager_fn";
}

void find_triton_reference(const std::vector<std::string>& source_names, const std::string& category,
                           const repo_index& idx, kernel_source_info* info) {
  if (category == "unknown" || category == "annotation" || category == "communication") return;
  std::set<std::string> query;
  for (const auto& n : source_names)
    for (auto& t : name_tokens(n)) if (!stop_words().count(t)) query.insert(t);
  if (query.empty()) return;
  std::vector<const kernel_definition*> cands;
  std::map<std::string, int> df;
  for (const auto& d : idx.definitions()) {
    if (d.language != "triton" || d.inductor) continue;
    cands.push_back(&d);
    std::set<std::string> toks;
    for (auto& t : name_tokens(d.symbol)) toks.insert(t);
    for (const auto& t : toks) ++df[t];
  }
  if (cands.empty()) return;
  std::vector<std::string> qv(query.begin(), query.end());
  auto qd = dtype_set(qv);
  double best = 0;
  std::vector<const kernel_definition*> best_defs;
  for (const auto* d : cands) {
    auto toks = name_tokens(d->symbol);
    auto dd = dtype_set(toks);
    if (!qd.empty() && !dd.empty() && std::none_of(qd.begin(), qd.end(), [&](const std::string& x) { return dd.count(x) > 0; }))
      continue;  // disjoint compute dtypes
    double score = 0;
    std::set<std::string> seen;
    for (const auto& t : toks) {
      if (stop_words().count(t) || !query.count(t) || !seen.insert(t).second) continue;
      score += std::log(1.0 + static_cast<double>(cands.size()) / df[t]);
    }
    if (score > best + 1e-9) {
      best = score;
      best_defs = {d};
    } else if (score > 0 && std::fabs(score - best) <= 1e-9) {
      best_defs.push_back(d);
    }
  }
  if (best < 1.0 || best_defs.empty()) return;
  if (best_defs.size() > 1) {
    info->notes += (info->notes.empty() ? "" : "; ") +
                   strprintf("triton reference: %zu equally scored candidates (not chosen)", best_defs.size());
    return;
  }
  const auto* d = best_defs[0];
  info->triton_ref_file = idx.root_variable(d->root) + "/" + d->rel_path.generic_string() + ":" + std::to_string(d->line);
  info->triton_ref_symbol = d->symbol;
}

}  // namespace magpie::source
