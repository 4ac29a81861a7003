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
  json to_json() const;
};

struct trial_verdict {
  int index = 0;
  uint64_t seed = 0;
  std::string size;
  bool passed = true;
  std::vector<std::string> failures;  ///< one line each, e.g. "output c: 3 of 4099 elements ..."
  std::vector<tensor_diff> outputs;
  json to_json() const;
};

struct correctness_verdict {
  bool passed = false;
  std::vector<trial_verdict> trials;
  std::vector<std::string> errors;  ///< summary lines for Magpie's errors[]
  double max_abs = 0, max_rel = 0, mean_abs = 0, mean_rel = 0;  ///< over all trials and outputs
  json to_json() const;
};

tolerance tolerance_for(dtype t, const correctness_policy& p);

/// Element-wise comparison of one output (shapes/dtypes must match, else a failure).
tensor_diff compare_tensor(const std::string& name, const tensor& ref, const tensor& got, const tolerance& tol);

bool all_zero(const tensor& t);
bool all_constant(const tensor& t, double* value);
/// Same number of elements and every value equal (NaN equal to NaN).
bool same_values(const tensor& a, const tensor& b);
bool same_bytes(const tensor& a, const tensor& b);

/// Compares every trial of `cand` with the same trial of `ref`: identical inputs required,
/// outputs within tolerance, NaN patterns equal, no degenerate outputs (unless the reference's
/// are), no input mutation the reference does not also do.
correctness_verdict compare_to_reference(const manifest& ref, const manifest& cand, const correctness_policy& p);

}  // namespace magpie::kernel
