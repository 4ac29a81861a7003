// Shared pieces of the report entry points (api.h): GPU spec resolution and the HTML page.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/fs.h"
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

struct input_health;

/// What the HTML page shows.
struct report_page {
  std::string title;
  const trace_model* model = nullptr;
  const analysis* result = nullptr;
  const stage_split* split = nullptr;
  const input_health* health = nullptr;
  size_t top_k = 50;
};
/// A self-contained HTML page (inline CSS and SVG, no scripts or external assets): read
/// problems first, then a summary row (GPU timeline bar, stage split, top kernels) meant to be
/// read without scrolling, the per-stream timeline with the largest idle gaps, the gap analysis
/// (idle gaps by length, the largest with the kernels around them), the roofline plot of modelled ops (log-log achieved TFLOP/s vs
/// FLOP/byte, points coloured by op category with a legend, ceilings labelled without
/// overlap, hover text with op / shape / time), op and kernel tables (first `top_k` rows), steps.
std::string report_html(const report_page& page);

// Shared by run_trace_report and run_inference_analysis.
model_options model_options_for(bool tracelens_compat);
/// ops, kernels, ops_by_name, gpu_timeline and `extra` tables as <name>.csv in `dir` (and, with
/// `xlsx`, one workbook `xlsx_name` holding them all); the paths are appended to `files`.
status write_analysis_files(const fs::path& dir, const analysis& a, bool xlsx, const std::string& xlsx_name,
                            std::vector<std::pair<std::string, std::string>> extra, std::vector<std::string>* files);
/// Upstream Magpie's file-name value sanitiser: '.' → 'p', other non-alphanumerics dropped, "" → unknown.
std::string label_value(const std::string& v);
/// Upstream Magpie's rank-0 trace patterns (vLLM, SGLang), then rank discovery; empty when none.
fs::path find_rank0_trace(const fs::path& dir);

}  // namespace magpie::trace
