// Shared pieces of the report entry points (api.h): GPU spec resolution and the HTML page.
#pragma once

#include <optional>
#include <string>

#include "core/fs.h"
#include "core/json.h"
#include "core/status.h"
#include "gpu/specs.h"
#include "trace/analysis.h"
#include "trace/stages.h"

namespace magpie::trace {

struct spec_choice {
  std::optional<gpu::gpu_spec> spec;
  std::string how;  ///< "--gpu-spec FILE", "table entry X for 'name'", or why there is none
};
/// --gpu-spec file, else the table entry matching `gpu_name`, else the trace's device name.
/// Errors only for an unreadable / invalid spec file or an explicit gpu_name with no entry.
status_or<spec_choice> choose_gpu_spec(const fs::path& spec_file, const std::string& gpu_name,
                                       const std::string& device_name, bool use_achievable);

/// A self-contained HTML page (inline CSS and SVG, no external assets): GPU timeline, the
/// roofline plot of modelled ops (log-log achieved TFLOP/s vs FLOP/byte with the memory slope
/// and compute ceilings of the spec), op and kernel tables (first `top_k` rows), the steps.
std::string report_html(const std::string& title, const trace_model& m, const analysis& a, const stage_split& split,
                        size_t top_k);

}  // namespace magpie::trace
