// Public entry points of the trace module for other modules (src/serve after a profiled
// benchmark, src/mcp tools, src/cli). Each writes its files under the given output directory
// and returns what upstream Magpie puts into benchmark_report.json: the gap analysis as a typed
// result (gap_outputs; its JSON block by trace/gap_printer.h), the others still as the JSON
// block (issue 31's remaining work).
//
// Contract shared by every function here:
//   * A `status` error means the request itself is unusable: an invalid config (bad window,
//     top_k < 1, unknown stage name), an unreadable --gpu-spec file, or an output directory that
//     cannot be created / written. Nothing is half-written under a final name (atomic writes).
//   * Problems with the *data* are not errors: a missing trace directory, no trace files, a
//     malformed or truncated trace (counted and reported), or no kernel events end up in the
//     block's "errors" / "warnings" arrays, exactly as upstream Magpie reports them. Callers decide
//     whether that fails their run (upstream Magpie's CLI exits 1 when "top_kernels" is empty).
//   * Traces are PyTorch-profiler (Kineto) Chrome traces, .json or .json.gz (auto-detected
//     from the bytes), root object {"traceEvents": [...]} or a bare list; they are streamed,
//     never loaded whole. Times in the blocks are microseconds unless a key says otherwise.
//   * Thread-safe: no global state; functions may run concurrently on different inputs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/status.h"

namespace magpie::trace {

struct gap_outputs;     // gap_analysis.h
struct report_result;     // report_result.h
struct inference_result;  // report_result.h

/// Upstream Magpie's GapAnalysisConfig (YAML `gap_analysis:` / CLI flags), same defaults.
struct gap_config {
  bool enabled = false;
  double trace_start_pct = 0.0;    ///< window start, % of the trace span (0–100, < end)
  double trace_end_pct = 100.0;    ///< window end, % of the trace span
  int top_k = 20;                  ///< rows kept in the CSVs and "top_kernels"
  double min_duration_us = 0.0;    ///< events shorter than this are dropped (0: keep all)
  /// Allow-list of category substrings (case-insensitive); nullopt or empty = no filter.
  std::optional<std::vector<std::string>> categories = std::vector<std::string>{"kernel", "gpu"};
  /// Deny-list of category substrings (case-insensitive); nullopt or empty = none.
  std::optional<std::vector<std::string>> ignore_categories =
      std::vector<std::string>{"gpu_user_annotation", "user_annotation"};
  bool find_kernel_sources = false;  ///< append upstream Magpie's 15 kernel-source columns to gap_analysis.csv
  std::optional<std::vector<std::string>> kernel_source_repos;  ///< repository roots to search
  bool auto_clone_repos = true;      ///< kept for report compatibility; magpie never clones
  std::optional<std::string> repos_base_dir;
  // Not in upstream Magpie's config dict (CLI-level switches):
  bool write_rank_csv = true;        ///< gap_analysis_rank<N>.csv when > 1 rank (--no-rank-csv)
  bool clamped_traces = false;       ///< also write <stem>_clamped_<s>_<e>.trace.json.gz
  /// Files to use where several trace files claim the same rank (--rank-file); without one,
  /// such a directory is refused (an error naming the files).
  std::vector<std::string> rank_files;

  /// Upstream Magpie's range checks: 0 ≤ start ≤ 100, 0 ≤ end ≤ 100, start < end; top_k ≥ 1.
  status validate() const;
  // JSON (upstream to_dict / from_dict): trace/gap_config_codec.h.
};

/// Standalone gap analysis over every rank trace found in `trace_dir` (a workspace holding
/// torch_trace/ is descended). Writes `out_dir`/gap_analysis.csv, gap_analysis_rank<N>.csv
/// (more than one rank and write_rank_csv) and, with clamped_traces, the clamped traces into
/// `out_dir` too. `out_dir` is the gap_analysis directory itself (e.g. <workspace>/gap_analysis)
/// and is created when needed.
/// Returns the analysed result and where its files went; gap_block_json (trace/gap_printer.h)
/// prints it as upstream Magpie's `gap_analysis` block: {config, total_duration_us, num_ranks,
/// top_kernels: [{name, calls, self_cuda_total_us, avg_time_us, pct_total, input_shapes}],
/// clamped_trace_paths, errors, csv_path, output_dir} plus our additions "ranks" (per rank:
/// rank, trace_file, total_duration_us, read statistics) and "warnings".
status_or<gap_outputs> run_gap_analysis(const gap_config& cfg, const fs::path& trace_dir, const fs::path& out_dir);

/// Inference (serving) trace analysis: upstream Magpie's `analysis_mode: inference` without TraceLens.
struct inference_config {
  /// Stages to analyse, canonical names "prefilldecode", "decode", "prefill" (aliases of
  /// Upstream Magpie's analysis_stages accepted: pd, mixed, prefill_decode, decode_only, prefill_only…).
  std::vector<std::string> stages = {"prefilldecode", "decode", "prefill"};
  /// Values for the CSV file name <label>_ISL<isl>_OSL<osl>_CONC<conc>_kernel_roofline_simple.csv;
  /// sanitised as upstream Magpie does ('.'→'p', other non-alphanumerics dropped, empty → "unknown").
  std::string isl, osl, conc;
  /// GPU spec for the roofline: a user JSON in TraceLens's arch schema (wins), else the name of
  /// an entry of data/gpu_specs.json ("H200", "MI300X", …), else the trace's
  /// deviceProperties[0].name, else no roofline columns (as TraceLens without an arch file).
  fs::path gpu_spec_file;
  std::string gpu_name;
  bool use_achievable = true;  ///< measured ceilings where the spec table has them, else datasheet
  fs::path trace_file;         ///< explicit trace to analyse (skips the rank-0 search in trace_dir)
  /// TraceLens's default rules instead of magpie's (report_config::tracelens_compat).
  bool tracelens_compat = false;
  /// Upstream Magpie's tracelens.export_format: "csv" (default) or "excel" (adds <label>/<label>.xlsx with
  /// every table of the stage); anything else is an invalid config.
  std::string export_format = "csv";
};

/// Finds the rank-0 trace in `trace_dir` (upstream Magpie's vLLM/SGLang patterns, then any trace),
/// splits it into steps from the step annotations (vLLM detailed/native, SGLang, ATOM) or,
/// without annotations, from kernel patterns, picks one representative step per stage (the
/// largest batch; decode: then the median GPU busy time) and writes into `out_dir` (normally
/// <workspace>/tracelens) per stage <label>/ (ops.csv, kernels.csv, gpu_timeline.csv) and
/// <label>_ISL…_kernel_roofline_simple.csv with upstream Magpie's columns (research magpie.md §7.4).
/// Labels: prefilldecode → "prefilldecode", decode → "decode_only", prefill → "prefill_only".
/// Returns the analysis as types; inference_result_json (trace/report_printer.h) prints it as
/// Upstream Magpie's `tracelens_analysis` block: {enabled, analysis_mode:"inference",
/// analysis_stages, trace_dir, split_dir, output_dir, gpu_arch_platform, rank0_trace,
/// phase_picks{stage:{…}}, stage_results{stage:{stage, trace_path, output_dir, files,
/// simple_summary_file | error, phase_pick}}, output_files, errors, warnings} plus "input"
/// (input health: status ok | partial | unusable, problems) and "rules". When the steps'
/// phases cannot be told apart, no stage files are written and each stage says why.
status_or<inference_result> run_inference_analysis(const inference_config& cfg, const fs::path& trace_dir,
                                                   const fs::path& out_dir);

/// Our richer single-trace report (what `magpie trace report` writes): GPU timeline, kernel
/// table, op table with perf models and roofline, TraceLens's per-op-name view, stages; files
/// report.json, kernels.csv, ops.csv, ops_by_name.csv, gpu_timeline.csv,
/// execution_details.csv, report.html (self-contained, SVG roofline) and, with xlsx,
/// report.xlsx in `out_dir`. Returns the report (report.json is trace_report_json of it,
/// trace/report_printer.h); its `input` says whether the trace was read completely ("ok"),
/// partly ("partial": problems listed, files still written) or not at all / has no GPU events
/// ("unusable": nothing is written, `output_files` is empty).
struct report_config {
  fs::path gpu_spec_file;      ///< as inference_config
  std::string gpu_name;
  bool use_achievable = true;
  int top_k = 50;              ///< rows in the HTML tables (CSV/JSON keep all)
  bool html = true;
  bool xlsx = false;           ///< also report.xlsx (one sheet per table)
  /// TraceLens's default rules, to reproduce an existing TraceLens report: the GPU timeline
  /// counts only linked GPU events, kernel durations are kept raw (no stream-overrun clipping),
  /// and events ending >= 1 µs after their parent leave the host tree. The report says which.
  bool tracelens_compat = false;
};
status_or<report_result> run_trace_report(const report_config& cfg, const fs::path& trace_file,
                                          const fs::path& out_dir);

}  // namespace magpie::trace
