// Kernel classification: kind (which library / generator produced the kernel), category
// (what it computes) and parsed facts for the notes column. Rules are keyword scans over the
// demangled name, first match wins (research/magpie.md §8.1 plus NVIDIA libraries).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "source/kernel_name.h"

namespace magpie::source {

/// How a kind's definition can be looked up in repository roots.
enum class lookup_mode {
  none,    ///< closed source or not a kernel: never resolvable (source_resolution unsupported)
  cpp,     ///< a __global__ function in C++/CUDA/HIP sources
  python,  ///< a @triton.jit / @triton.autotune def in .py sources
  any,     ///< a plain identifier: either of the above decides
};

struct kernel_class {
  std::string kind;       ///< see kernel_source_info::kind
  std::string category;   ///< see kernel_source_info::category
  lookup_mode mode = lookup_mode::none;
  std::string symbol;     ///< the function name to look up ("" when none)
  std::vector<std::string> scopes;  ///< C++ namespaces of the symbol (outermost first)
  int param_count = -1;   ///< from the signature; -1 unknown
  std::string return_type;  ///< from the signature ("void", "std::enable_if<…>::type"); "" if none
  std::string unsupported_error;  ///< stable token when mode == none
  std::string repo_hint;  ///< which repository root to pass to resolve this kind
  std::vector<std::string> notes;  ///< dtype, tile, layout, functor, generator facts
  /// Set when the name is also another library's kernel ("aotriton" for `attn_fwd`,
  /// "triton_kernels" for `_sum_bitmatrix_rows`): a match by name alone outside that library
  /// (no root or folder of that name) is capped below the resolved threshold.
  std::string shared_with;
};

/// Classifies one parsed kernel name.
kernel_class classify_kernel(const parsed_kernel_name& name);

/// Driver/runtime copies and fills as traces name them ("Memcpy HtoD …", "Memset (Device)",
/// "__amd_rocclr_copyBuffer", …): not kernels anyone wrote.
bool is_runtime_operation(std::string_view name);

/// Upstream Magpie's category keyword scan (with NVIDIA additions) over `text`; "unknown" when none hits.
std::string categorize(const std::string& text);

/// Prefix for "<prefix>_source_not_found" / "<prefix>_source_ambiguous" ("triton" for Triton
/// kinds as in upstream Magpie, the kind otherwise; "" for unknown → "source_not_found").
std::string error_prefix(const std::string& kind);

}  // namespace magpie::source
