// Matching one classified kernel name against the index: candidate definitions, then evidence
// filters that never pick among equals (docs/source-mapping.md, "Match"). Internal to
// src/source/.
#pragma once

#include <string>
#include <vector>

#include "source/classify.h"
#include "source/kernel_name.h"
#include "source/repo_index.h"
#include "source/signature.h"

namespace magpie::source {

struct match_state {
  std::vector<const kernel_definition*> defs;
  double confidence = 1.0;
  std::vector<std::string> notes;
  std::vector<const kernel_definition*> alternatives;  ///< other kernels / copies the name could mean
  bool distinct_names = false;  ///< several different indexed names match: ambiguous even in one file
  /// The only definitions differ from the trace in namespace *and* signature: not this kernel.
  bool refused = false;
  signature_fit fit = signature_fit::unknown;  ///< fit of the definitions kept
};

/// Exact symbol matches; for Triton-capable lookups, else a token-boundary prefix
/// ("<indexed>_<suffix>"): a suffix Triton adds is as good as exact (0.95); any other suffix
/// resolves only when one prefix is left, at 0.3, with the kernels sharing the stem listed as
/// alternatives; several prefixes → ambiguous.
match_state candidates_for(const kernel_class& c, const repo_index& idx);

/// Evidence filters: definitions over declarations, identical copies collapsed, exact
/// namespace, signature shape (exact > unknown > definition extends the trace > differs),
/// parameter count, enable_if operators, then a primary definition over copies under
/// test/benchmark/copy paths. Confidence factors and notes are recorded in `m`.
void narrow(const kernel_class& c, const parsed_kernel_name& n, const repo_index& idx, match_state* m);

/// True for a path inside a test or benchmark folder, or a fork's copy of a file
/// (`CUDALoops_copy.cuh`, `*_bak.cu`, `*.orig.cu`, a `*_copy/` folder).
bool is_secondary_copy_path(const fs::path& rel);

}  // namespace magpie::source
