// Kernel source mapping: GPU kernel names (as they appear in a profiler trace) → the file:line
// in the given repository roots that defines them, plus upstream Magpie's 15 "find_kernel_sources" CSV
// columns (research/magpie.md §8.1) and a numeric confidence.
//
// Contract (fail-closed): a name is `resolved` only when exactly one definition matches under
// the rules in docs/source-mapping.md with a confidence of at least k_min_resolved_confidence;
// one match below it → `candidate` (location filled, source_error "below_confidence_threshold":
// check it before acting); several equally good matches → `unresolved` with
// source_error "<kind>_source_ambiguous" (the candidates are listed in `notes` / `candidates`);
// no match → `unresolved` with "<kind>_source_not_found"; kinds that are closed-source
// (cuBLAS/nvjet/cutlass-in-cuBLAS, cuDNN, NCCL binaries, ROCm runtime blits) or annotations →
// `unsupported` with a stable error. Nothing is ever cloned or downloaded: when no root covers a
// kind, source_error is "no_repo_for_kind" and `notes` names the repository to pass.
#pragma once

#include <string>
#include <vector>

#include "core/fs.h"
#include "core/status.h"

namespace magpie::source {

/// Lowest confidence reported as `resolved`; a single match below it is a `candidate`.
constexpr double k_min_resolved_confidence = 0.7;

/// The 15 upstream Magpie columns, in CSV order (kind … source_error), then our additions.
struct kernel_source_info {
  std::string name;                 ///< the trace name as given (not a CSV column)
  std::string kind;                 ///< aten_native, inductor, triton_jit, cublas, nvjet, cutlass,
                                    ///< cudnn, trtllm_gen, tensorrt_llm, flashinfer, flash_attn,
                                    ///< deep_gemm, pytorch_symm_mem, nccl, cub, rocprim, ck_tile,
                                    ///< ck, tensile_gemm, aiter, vllm, sglang, hip_cpp, cuda_cpp,
                                    ///< runtime, annotation, unknown (docs/source-mapping.md)
  std::string category;             ///< attention, kv_cache, router, moe_gemm, gemm, layernorm,
                                    ///< softmax, copy, elementwise, indexing, reduce, blit,
                                    ///< communication, annotation, unknown
  std::string source_repo;          ///< repository name (root dir name) when resolved
  std::string source_file;          ///< "$<REPO>_DIR/relpath:line" when resolved, else ""
  std::string upstream_url;         ///< GitHub blob URL with #L<line> for known repos, else ""
  std::string test_file;            ///< routed test file ($VAR/relpath) when one exists in the roots
  std::string test_cmd;             ///< command to run that test, else ""
  std::string baseline_ref_file;    ///< eager reference in the test file, else ""
  std::string baseline_ref_symbol;
  std::string baseline_ref_kind;    ///< eager_fn | perftest_wrapper | inline_in_test | none
  std::string triton_ref_file;      ///< a Triton kernel implementing the same op, else ""
  std::string triton_ref_symbol;
  std::string notes;                ///< "; "-joined facts (dtype, template args, candidates, hints)
  std::string source_resolution;    ///< resolved | candidate | unresolved | unsupported
  std::string source_error;         ///< stable token, "" when resolved

  // Additions beyond upstream Magpie.
  double confidence = 0;            ///< 0–1: 1 exact unique symbol match; 0 when neither resolved
                                    ///< nor candidate
  std::string demangled;            ///< demangled, normalised name used for matching
  std::string symbol;               ///< the function name that was looked up ("" if none)
  /// The indexed name the answer points at (resolved / candidate); differs from `symbol` for a
  /// name-prefix match. Not written to the reports.
  std::string matched_symbol;
  fs::path file;                    ///< absolute path of the definition (resolved / candidate)
  int line = 0;                     ///< 1-based line of the definition (resolved / candidate)
  std::vector<std::string> candidates;  ///< "$VAR/relpath:line" of every matching definition
  /// Resolved only: "definition", "declaration" (no body found) or "macro_expansion" (the
  /// kernel is declared by a macro; `line` is the invocation, `macro_definition` the #define).
  std::string definition_kind;
  std::string macro_definition;     ///< "NAME=$VAR/relpath:line" of the #define, else ""
  /// What else the trace name could mean ("name=$VAR/relpath:line"): for low-confidence
  /// name-prefix matches the other Triton kernels sharing the matched stem; when a primary
  /// definition was preferred, its copies under test/benchmark/copy paths.
  std::vector<std::string> alternatives;
  /// Functors / host functions named in the template arguments (the op a generic TensorIterator
  /// kernel runs), each "qualified::name=$VAR/relpath:line" when exactly one definition matches,
  /// "qualified::name=" otherwise.
  std::vector<std::string> functor_sources;
};

/// Names of the 15 CSV columns in upstream Magpie's order.
const std::vector<std::string>& kernel_source_csv_columns();
/// The 15 column values of `info`, in kernel_source_csv_columns() order.
std::vector<std::string> kernel_source_csv_row(const kernel_source_info& info);

/// Resolves each name (same order and count as `kernel_names`) against definitions indexed from
/// `repo_roots` (directories; each is scanned recursively, skipping .git, build, node_modules …).
/// Errors only for unusable roots (missing / not a directory) — unresolved names are data.
/// An empty `repo_roots` is allowed: every name is classified and reported as unresolved with
/// "no_repo_for_kind" plus a note naming the repository to pass.
status_or<std::vector<kernel_source_info>> find_kernel_sources(
    const std::vector<std::string>& kernel_names, const std::vector<fs::path>& repo_roots);

/// Path-variable preamble lines upstream Magpie puts before the gap-analysis CSV
/// ("# Repository Path Mappings:", "# Base directory: …", "# $VAR=./rel", "#", warning line),
/// each without '\n'. `first_column` / `last_column` are the spreadsheet letters of the
/// source columns (e.g. "G", "U").
std::vector<std::string> kernel_source_csv_preamble(const std::vector<fs::path>& repo_roots,
                                                    const std::string& first_column,
                                                    const std::string& last_column);

}  // namespace magpie::source
