// Reference routing for a kernel: the test that exercises it, an eager (baseline) reference in
// that test, and a Triton kernel implementing the same operation. Internal to src/source/.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "source/kernel_sources.h"
#include "source/repo_index.h"

namespace magpie::source {

/// Lazily loaded text of test files, shared across the kernels of one find_kernel_sources call.
class test_file_cache {
 public:
  explicit test_file_cache(const repo_index& idx) : m_idx(idx) {}
  /// Test files of `root` whose text contains `needle` as a whole word.
  std::vector<fs::path> mentioning(size_t root, const std::string& needle);
  const std::string& text(size_t root, const fs::path& rel);

 private:
  const repo_index& m_idx;
  std::map<std::pair<size_t, std::string>, std::string> m_text;
};

/// Fills test_file, test_cmd and baseline_ref_* for a resolved definition `d` of `info`.
void route_test(const kernel_definition& d, const repo_index& idx, test_file_cache& cache,
                kernel_source_info* info);

/// Fills triton_ref_file / triton_ref_symbol for a non-Triton kernel when exactly one Triton
/// definition scores best (IDF-weighted token overlap ≥ 1.0, compatible dtypes).
void find_triton_reference(const std::vector<std::string>& name_tokens_source, const std::string& category,
                           const repo_index& idx, kernel_source_info* info);

/// Lower-cased tokens of an identifier: split on non-alphanumerics and camelCase boundaries.
std::vector<std::string> name_tokens(const std::string& s);

}  // namespace magpie::source
