// The correctness gate: candidate outputs against the reference's outputs, trial by trial,
// on identical seeded inputs. Never based on an exit code alone.
#pragma once

#include <string>
#include <vector>

#include "core/npy.h"
#include "kernel/harness.h"

namespace magpie::kernel {

struct tensor_diff {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  size_t numel = 0;
  size_t mismatches = 0;    ///< finite elements with |c − r| > atol + rtol·|r|
  size_t nan_mismatch = 0;  ///< positions where exactly one side is NaN (or ±inf differs)
  double max_abs = 0, mean_abs = 0, max_rel = 0, mean_rel = 0;
  double atol = 0, rtol = 0;
  int64_t first_bad = -1;   ///< flat index of the first failing element
  double first_ref = 0, first_got = 0;
};

struct trial_verdict {
  int index = 0;
  uint64_t seed = 0;
  std::string size;
  bool passed = true;
  std::vector<std::string> failures;  ///< one line each, e.g. "output c: 3 of 4099 elements ..."
  std::vector<tensor_diff> outputs;
};

struct correctness_verdict {
  bool passed = false;
  std::vector<trial_verdict> trials;
  std::vector<std::string> errors;  ///< summary lines for upstream Magpie's errors[]
  double max_abs = 0, max_rel = 0, mean_abs = 0, mean_rel = 0;  ///< over all trials and outputs
};

tolerance tolerance_for(dtype t, const correctness_policy& p);

/// Element-wise comparison of one output (shapes/dtypes must match, else a failure).
tensor_diff compare_tensor(const std::string& name, const tensor& ref, const tensor& got, const tolerance& tol);

bool all_zero(const tensor& t);
bool all_constant(const tensor& t, double* value);
/// Same number of elements and every value equal (NaN equal to NaN).
bool same_values(const tensor& a, const tensor& b);
bool same_bytes(const tensor& a, const tensor& b);
/// Why `got` is degenerate where `ref` is not (all zeros, one constant), or "".
std::string degenerate_reason(const std::string& name, const tensor& ref, const tensor& got);
/// 64-bit digest of dtype, shape and bytes (identity checks; not a cryptographic hash).
uint64_t tensor_digest(const tensor& t);

/// Identity of an input tensor without its bytes: enough to check that two harnesses saw the
/// same input and whether a launch changed it.
struct input_digest {
  bool present = false;
  uint64_t value = 0;
};

/// One reference trial as the supervisor holds it: outputs in memory, inputs as digests.
struct held_trial {
  manifest_trial meta;                 ///< names, dtypes, shapes, seed, size (files are gone)
  std::vector<input_digest> pre, post;
  std::vector<tensor> outputs;
  std::vector<std::vector<bool>> output_equals_input;  ///< [output][input]: the reference echoes it
  std::string error;                   ///< unreadable files: candidates cannot be judged
};

/// The reference's results, held by the supervisor. Its files are deleted once loaded (unless
/// they belong to another job), so no candidate process can read the reference's outputs.
struct held_reference {
  std::string id;
  std::string harness, device;
  int n_sizes = 1, timed_size = 0;
  std::vector<held_trial> trials;  ///< correctness trials, in order
  std::vector<held_trial> checks;  ///< timed-size trials for the timing check seeds
  bool files_removed = false;
  size_t bytes_held = 0;           ///< output bytes kept in memory
  const held_trial* check_for_seed(uint64_t seed) const;
};

/// Loads every trial of the reference's manifest into memory; with `remove_files`, deletes the
/// tensor files afterwards (manifest.json stays).
held_reference hold_reference(const std::string& id, const manifest& m, bool remove_files);

/// Deletes the tensor files a manifest names (inputs pre/post, outputs); manifest.json stays.
void remove_manifest_files(const manifest& m);

/// Compares every correctness trial of `cand` with the same trial of `ref`: identical inputs
/// required, outputs within tolerance, NaN patterns equal, no degenerate outputs (unless the
/// reference's are), no input mutation the reference does not also do. The candidate's tensor
/// files are deleted once compared when `remove_files` is set.
correctness_verdict compare_to_reference(const held_reference& ref, const manifest& cand, const correctness_policy& p,
                                         bool remove_files);

/// Element indices a `probe <seed> <count>` asks for (docs/harness-protocol.md): all of them
/// when numel <= count, else `count` indices mix64(seed + (j+1)·golden) mod numel.
std::vector<size_t> probe_indices(uint64_t seed, size_t count, size_t numel);
/// The elements of `t` at `idx`, as a tensor of shape {idx.size()}.
tensor gather(const tensor& t, const std::vector<size_t>& idx);

}  // namespace magpie::kernel
