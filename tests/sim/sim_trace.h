// Chrome-trace (PyTorch-profiler-like) output of the simulated server: per engine step a CPU
// op with input shapes, the GPU kernels it "launched" (cat "kernel", External id links them)
// and a gpu_user_annotation span, written gzip-compressed as
// <dir>/magpie-sim-rank-0.<ms>.pt.trace.json.gz.
#pragma once

#include <cstdint>
#include <string>

#include "core/json.h"

namespace magpie::sim {

class trace_writer {
 public:
  /// One engine step [t0_ns, t1_ns] that prefilled `prefill_tokens` and decoded `running` sequences.
  void add_step(int64_t t0_ns, int64_t t1_ns, int64_t prefill_tokens, int running);
  /// Writes the trace; returns "" or an error message.
  std::string write(const std::string& dir) const;
  size_t steps() const { return m_steps; }

 private:
  json m_events = json::array();
  size_t m_steps = 0;
  int64_t m_ext = 1;
};

}  // namespace magpie::sim
