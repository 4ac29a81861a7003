// `magpie benchmark --trace-dir DIR`: Magpie's standalone gap analysis (same flags, CSVs,
// console table and exit codes), on the native streaming trace engine (src/trace).
#include <cstdio>

#include "cli/benchmark_hooks.h"
#include "core/log.h"
#include "trace/gap_analysis.h"
#include "trace/util.h"

namespace magpie::cli {

void add_gap_analysis_flags(arg_parser& p) {
  const std::string g = "gap analysis (standalone, with --trace-dir)";
  p.add_value("--trace-dir", "", "PATH",
              "run standalone gap analysis on existing PyTorch-profiler traces instead of a benchmark: a "
              "torch_trace directory, or a benchmark workspace holding one",
              {}, g)
      .add_value("--top-k", "", "N", "gap analysis: number of top kernels kept (default: 20)", {}, g)
      .add_value("--start-pct", "", "PCT", "gap analysis: window start, % of the trace span (0-100, default: 0)", {}, g)
      .add_value("--end-pct", "", "PCT", "gap analysis: window end, % of the trace span (0-100, default: 100)", {}, g)
      .add_value("--min-duration-us", "", "US", "gap analysis: drop events shorter than this, microseconds (default: 0)",
                 {}, g)
      .add_multi("--categories", "", "CAT",
                 "gap analysis: event categories to include, case-insensitive substrings (default: kernel gpu; "
                 "given with no value: all)",
                 g)
      .add_multi("--ignore-categories", "", "CAT",
                 "gap analysis: event categories to exclude (default: gpu_user_annotation user_annotation)", g)
      .add_bool("--no-rank-csv", "", "gap analysis: skip the per-rank gap_analysis_rank<N>.csv files", g)
      .add_bool("--find-kernel-sources", "", "gap analysis: add kernel source / test columns (15 experimental columns)", g)
      .add_multi("--kernel-source-repos", "", "DIR",
                 "gap analysis: repository roots searched for kernel sources (nothing is cloned)", g)
      .add_bool("--clamped-traces", "", "gap analysis: also write <stem>_clamped_<start>_<end>.trace.json.gz per rank "
                                        "(window applied, no category filter)", g)
      .add_multi("--rank-file", "", "FILE",
                 "gap analysis: where several trace files claim one rank, the file to use (name or path; repeatable)", g)
      .add_bool("--allow-partial", "",
                "exit 0 for a partial result (default: exit 3 after writing the outputs): gap analysis read a trace only "
                "partly; a serving benchmark had failed requests", g);
}

namespace {

status_or<trace::gap_config> config_from_flags(const arg_parser& p) {
  trace::gap_config c;
  c.enabled = true;
  MAGPIE_ASSIGN_OR_RETURN(int64_t top_k, p.integer("--top-k", 20));
  c.top_k = static_cast<int>(top_k);
  MAGPIE_ASSIGN_OR_RETURN(c.trace_start_pct, p.number("--start-pct", 0.0));
  MAGPIE_ASSIGN_OR_RETURN(c.trace_end_pct, p.number("--end-pct", 100.0));
  MAGPIE_ASSIGN_OR_RETURN(c.min_duration_us, p.number("--min-duration-us", 0.0));
  if (p.has("--categories")) c.categories = p.values("--categories");
  if (p.has("--ignore-categories")) c.ignore_categories = p.values("--ignore-categories");
  c.write_rank_csv = !p.has("--no-rank-csv");
  c.find_kernel_sources = p.has("--find-kernel-sources");
  if (p.has("--kernel-source-repos")) c.kernel_source_repos = p.values("--kernel-source-repos");
  c.clamped_traces = p.has("--clamped-traces");
  if (p.has("--rank-file")) c.rank_files = p.values("--rank-file");
  MAGPIE_RETURN_IF_ERROR(c.validate());
  return c;
}

}  // namespace

int run_gap_analysis(const arg_parser& p, const global_options&) {
  fs::path trace_dir = p.value("--trace-dir");
  std::error_code ec;
  if (fs::is_directory(trace_dir / "torch_trace", ec)) trace_dir = trace_dir / "torch_trace";
  if (!fs::is_directory(trace_dir, ec)) {
    std::fprintf(stderr, "Error: trace directory not found: %s (--trace-dir)\n", trace_dir.c_str());
    return k_exit_failure;
  }
  auto cfg = config_from_flags(p);
  if (!cfg.ok()) {
    std::fprintf(stderr, "magpie benchmark: %s\n", cfg.get_status().message().c_str());
    return k_exit_usage;
  }
  // Magpie: <--output-dir (default ./results)>/gap_analysis/.
  fs::path gap_dir = fs::path(p.value("--output-dir", "./results")) / "gap_analysis";
  if (auto st = make_dirs(gap_dir); !st.ok()) {
    std::fprintf(stderr, "magpie benchmark: %s\n", st.message().c_str());
    return k_exit_failure;
  }
  trace::gap_result r = trace::analyze_gap(*cfg, trace_dir);
  for (const auto& e : r.errors) std::fprintf(stderr, "Warning: %s\n", e.c_str());
  for (const auto& w : r.warnings) MAGPIE_LOG_WARN("%s", w.c_str());
  if (r.merged.empty()) {
    std::fprintf(stderr, "Error: no kernel events found in the traces of %s (--trace-dir)\n", trace_dir.c_str());
    return k_exit_failure;
  }
  auto csv = trace::write_gap_outputs(r, gap_dir);
  if (!csv.ok()) {
    std::fprintf(stderr, "magpie benchmark: %s\n", csv.get_status().message().c_str());
    return k_exit_failure;
  }
  std::fputs(trace::gap_console_summary(r, gap_dir).c_str(), stdout);
  if (!r.health.ok() && !p.has("--allow-partial")) {
    MAGPIE_LOG_WARN("the traces were read only partly (see the warnings): outputs written; exit 3 (--allow-partial "
                    "accepts partial input)");
    return k_exit_partial;
  }
  return k_exit_ok;
}

}  // namespace magpie::cli
