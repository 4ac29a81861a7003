// Reader for the JSON-lines file written by libmagpie_cupti.so (docs/harness-protocol.md):
// kernel activity records and external-correlation records, read incrementally.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/json.h"

namespace magpie::kernel {

struct cupti_kernel {
  std::string name;
  uint64_t start = 0, end = 0;  ///< ns (CUPTI clock)
  uint64_t corr = 0;
  int device = 0;
  uint64_t stream = 0;
  int grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  int64_t sample = -1;  ///< external correlation id, -1 when none
};

class cupti_log {
 public:
  /// Reads lines appended since the last call (a partial last line is kept for later).
  void poll(const fs::path& path);
  /// Resolves kernel → sample via the correlation records seen so far.
  void join();
  const std::vector<cupti_kernel>& kernels() const { return m_kernels; }
  uint64_t dropped() const { return m_dropped; }
  size_t bad_lines() const { return m_bad_lines; }
  /// Span (first start → last end) and sum of durations of the kernels of sample `id`.
  bool sample_time(uint64_t id, double* span_ns, double* sum_ns, int* count) const;
  /// Per kernel name: count, median/min/max/total duration (ns), grid/block of the first launch.
  /// `sampled_only`: only kernels inside a timed sample (drops cache-flush and warm-up work).
  json summary(bool demangle, bool sampled_only = false) const;

 private:
  uint64_t m_offset = 0;
  std::string m_partial;
  std::vector<cupti_kernel> m_kernels;
  std::map<uint64_t, int64_t> m_corr_to_sample;
  uint64_t m_dropped = 0;
  size_t m_bad_lines = 0;
};

/// Itanium demangling (abi::__cxa_demangle); the input when it is not a mangled name.
std::string demangle(const std::string& name);

}  // namespace magpie::kernel
