// Machine-readable output of a kernel-source mapping run (JSON document, its schema, and CSV): the
// printers shared by `magpie trace sources` and the MCP find_kernel_sources tool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json.h"
#include "source/kernel_sources.h"

namespace magpie::source {

/// Per-name trace statistics (optional input of the report).
struct kernel_stat {
  std::string name;
  uint64_t calls = 0;
  double total_us = 0;  ///< summed event durations, µs
};

/// One kernel as JSON: name, the 15 upstream Magpie columns, then confidence, symbol, demangled, line,
/// candidates, functor_sources.
json kernel_source_to_json(const kernel_source_info& info);

/// {roots:[{path, variable}], summary:{total, resolved, candidate, unresolved, unsupported},
///  kernels:[{…, calls?, total_us?}]}. `stats` parallel to `infos` or empty.
json kernel_sources_report(const std::vector<kernel_source_info>& infos, const std::vector<kernel_stat>& stats,
                           const std::vector<fs::path>& roots);

/// The schema of kernel_source_to_json (one kernel, with the report's calls / total_us).
json kernel_source_schema();
/// The schema of kernel_sources_report.
json kernel_sources_report_schema();

/// CSV with upstream Magpie's preamble: Name[, Calls, Self CUDA total (us)], the 15 columns, confidence.
std::string kernel_sources_csv(const std::vector<kernel_source_info>& infos, const std::vector<kernel_stat>& stats,
                               const std::vector<fs::path>& roots);

}  // namespace magpie::source
