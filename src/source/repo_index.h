// Repository index: kernel definitions found by scanning source trees.
//   C++/CUDA/HIP (.cu .cuh .hip .cpp .cc .cxx .h .hpp .inl): every `__global__` function
//     (templates, SFINAE return types, __launch_bounds__/macro decorations, extern "C",
//     namespaces tracked through #if/#else branches) — definitions and declarations, with
//     file:line of the function name — and kernels defined by expanding a kernel-declaring
//     function-like macro (any file of any root), at the line of the invocation.
//   Python (.py): every `def` decorated with a Triton JIT decorator (@triton.jit, @jit,
//     @triton.autotune…@triton.jit, @triton.heuristics…), including defs embedded in the
//     source strings of inductor output_code.py modules.
// Directories skipped: .git __pycache__ node_modules build dist .tox .eggs venv .venv.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/fs.h"
#include "core/status.h"
#include "source/cpp_lexer.h"

namespace magpie::source {

struct kernel_definition {
  std::string symbol;               ///< function name ("vectorized_elementwise_kernel")
  std::vector<std::string> scopes;  ///< enclosing namespaces; "(anonymous namespace)" for `namespace {`
  std::string language;             ///< "cuda" | "hip" | "cpp" | "triton"
  std::string decorators;           ///< Python: "triton.autotune,triton.jit"; C++: ""
  size_t root = 0;                  ///< index into repo_index::roots()
  fs::path rel_path;                ///< relative to the root
  int line = 0;                     ///< 1-based line of the function name
  int param_count = -1;             ///< top-level parameters (-1 unknown)
  bool is_definition = true;        ///< false for a C++ declaration ending in ';'
  bool in_string = false;           ///< Python def inside a string literal (inductor output_code)
  bool inductor = false;            ///< file is torch inductor output
  uint64_t body_hash = 0;           ///< FNV-1a of the whitespace-normalised body (0 unknown)
  std::string snippet;              ///< the definition's first line, ≤ 200 chars
  std::string return_type;          ///< C++: the text between __global__ and the name
                                    ///< ("void", "std::enable_if_t<…>"), spaces collapsed
  /// C++ signature shapes (source/signature.h): template parameters ("" when not a template)
  /// and parameters; valid only when shape_known (false for macro expansions and for template
  /// heads that could not be read).
  std::string template_shape;
  std::string param_shape;
  bool shape_known = false;
  // Kernels defined by expanding a macro (`KERNEL_MACRO(name)` with a #define that declares a
  // __global__ function): `line` is the invocation, these locate the #define.
  std::string macro;                ///< the macro's name ("" for ordinary definitions)
  int macro_line = 0;               ///< 1-based line of its #define
  size_t macro_root = 0;            ///< root and file of the #define (may differ from the
  fs::path macro_rel;               ///< invocation's file)
  size_t macro_ref = 0;             ///< scanner-internal: index in the macro list it was given
};

struct index_stats {
  size_t files_scanned = 0, files_read = 0, bytes_read = 0, definitions = 0;
  size_t files_skipped_large = 0;
  size_t kernel_macros = 0;  ///< kernel-declaring #defines found
};

class repo_index {
 public:
  /// Scans every root. Errors: a root that does not exist or is not a directory.
  static status_or<repo_index> build(const std::vector<fs::path>& roots);

  /// Definitions whose symbol equals `symbol` (empty when none).
  std::vector<const kernel_definition*> lookup(std::string_view symbol) const;
  const std::vector<kernel_definition>& definitions() const { return m_defs; }
  const std::vector<fs::path>& roots() const { return m_roots; }
  /// "$PYTORCH_DIR" for root "…/pytorch" (upper-cased dir name, '-'/'.' → '_', + "_DIR").
  const std::string& root_variable(size_t root) const { return m_vars[root]; }
  const index_stats& stats() const { return m_stats; }
  /// Python test files (test_*.py, *_test.py) seen in root `root`, relative paths, sorted.
  const std::vector<fs::path>& test_files(size_t root) const { return m_tests[root]; }
  /// Host-function / class definitions of `names` in the indexed C++ files (one re-read of the
  /// files that contain any of the names). root and rel_path are set.
  std::vector<kernel_definition> find_named(const std::set<std::string>& names) const;
  /// Adds definitions scanned from `text` as if it were the file root/rel (tests, generated code).
  void add_file(size_t root, const fs::path& rel, std::string_view text);

 private:
  std::vector<fs::path> m_roots;
  std::vector<std::string> m_vars;
  std::vector<kernel_definition> m_defs;
  std::vector<std::vector<fs::path>> m_tests;
  std::vector<std::pair<size_t, fs::path>> m_cpp_files;  ///< (root, rel) of every C++ file seen
  struct located_macro {
    kernel_macro macro;
    size_t root = 0;
    fs::path rel;
  };
  std::vector<located_macro> m_macros;  ///< kernel-declaring #defines of every C++ file
  void add_definition(kernel_definition d);
  /// Kernels defined by invoking a macro #defined in another file (re-reads the C++ files
  /// that mention a macro name).
  void expand_cross_file_macros();
  std::unordered_map<std::string, std::vector<size_t>> m_by_symbol;
  index_stats m_stats;
};

/// Scanners (exposed for tests). `out` receives definitions with symbol/scopes/line/…; root
/// and rel_path are left for the caller.
void scan_cpp_source(std::string_view text, std::vector<kernel_definition>* out);
/// Host functions and struct/class definitions (not declarations) named in `names`
/// (decorators = "function" | "class").
void scan_cpp_named(std::string_view text, const std::set<std::string>& names, std::vector<kernel_definition>* out);
/// Kernels defined by invocations of `macros` (kernel-declaring #defines of other files) in
/// `text`; macro_ref indexes `macros`.
void scan_cpp_macro_uses(std::string_view text, const std::vector<kernel_macro>& macros,
                         std::vector<kernel_definition>* out);
/// The kernel-declaring function-like #defines of `text`.
std::vector<kernel_macro> scan_cpp_kernel_macros(std::string_view text);
void scan_python_source(std::string_view text, std::vector<kernel_definition>* out);
/// "$NAME_DIR" variable for a root directory name.
std::string root_variable_for(const fs::path& root);

}  // namespace magpie::source
