// Kernel names and time totals from PyTorch-profiler traces (input of kernel-source mapping,
// used by `magpie trace sources` and the MCP find_kernel_sources tool).
#pragma once

#include <string>
#include <vector>

#include "core/fs.h"
#include "core/status.h"
#include "source/report_printer.h"

namespace magpie::mcp {

struct trace_kernel_options {
  /// Category substrings that select events (case-insensitive); empty = every event with a name.
  std::vector<std::string> categories = {"kernel", "gpu_memcpy", "gpu_memset"};
  /// Category substrings that drop events.
  std::vector<std::string> ignore_categories = {"gpu_user_annotation", "user_annotation"};
  size_t top_k = 0;  ///< keep the k kernels with the largest totals (0 = all rows, copies included);
                     ///< with k > 0 copy/fill rows (memcpy/memset events, runtime blits) are dropped
};

/// Aggregates complete ("X") events by exact name over every trace in `inputs` (files, or
/// directories searched with Magpie's rank-trace discovery); sorted by total time descending,
/// then name. Errors: an input that does not exist, or no trace file found / readable.
status_or<std::vector<source::kernel_stat>> collect_trace_kernels(const std::vector<fs::path>& inputs,
                                                                  const trace_kernel_options& opts,
                                                                  std::vector<std::string>* warnings);

}  // namespace magpie::mcp
