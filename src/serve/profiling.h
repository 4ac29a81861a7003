// Torch-profiler control of a serving benchmark (/start_profile, /stop_profile), collection of
// the traces the server writes into <workspace>/torch_trace/, and their post-processing with
// the trace engine (src/trace): Magpie's kernel_summary / top_bottlenecks, gap_analysis and
// tracelens_analysis report blocks.
#pragma once

#include <string>
#include <vector>

#include "core/fs.h"
#include "core/json.h"
#include "core/status.h"
#include "serve/bench_config.h"
#include "serve/http_client.h"
#include "trace/gap_analysis.h"
#include "trace/report_result.h"

namespace magpie::serve {

/// POST /start_profile (SGLang also gets {"output_dir", "record_shapes": true}), answered
/// within timeout_s (the orchestrator bounds it by what is left of --timeout).
status start_profile(const endpoint_url& url, std::optional<serving_framework> framework, const std::string& server_trace_dir,
                     double timeout_s = 120.0);
/// POST /stop_profile; servers write their traces while answering, so the timeout is long.
status stop_profile(const endpoint_url& url, double timeout_s);

/// Trace files (*.json, *.json.gz, recursive) under `dir`, waiting up to timeout_s until at
/// least one exists and no file changed size for `settle_s`. Returns what is there at the end.
std::vector<fs::path> wait_for_traces(const fs::path& dir, double timeout_s, double settle_s = 2.0);

struct trace_blocks {
  json kernel_summary = json::array();  ///< [{name, time_ms, percent, calls}] of the first rank trace
  json top_bottlenecks = json::array(); ///< first 10 names of kernel_summary
  std::optional<trace::gap_outputs> gap_analysis;  ///< run_gap_analysis (gap_analysis.enabled); printed by report.cpp
  /// run_inference_analysis (profiler.tracelens.enabled); printed by report.cpp
  std::optional<trace::inference_result> tracelens_analysis;
  std::vector<std::string> errors, warnings;
};

/// Runs the post-processing on `trace_dir` (the workspace's torch_trace/), writing gap_analysis/
/// and tracelens/ under `workspace`.
/// `gpu_name` (e.g. "NVIDIA H200", may be empty) picks the roofline spec of tracelens_analysis.
trace_blocks post_process_traces(const benchmark_config& cfg, const fs::path& trace_dir, const fs::path& workspace,
                                 const std::string& gpu_name = {});

}  // namespace magpie::serve
