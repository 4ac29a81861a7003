// Gap analysis (upstream Magpie's modes/benchmark/gap_analysis.py, re-implemented on the streaming
// reader): per rank, events overlapping the time window, filtered by category substrings and
// minimum duration, aggregated by exact event name; ranks merged by name; top-k kept with
// percentages relative to the untruncated totals.
//
// Numeric semantics follow upstream Magpie's Python exactly: durations are the trace's µs doubles,
// summed in file order per name; a rank's total is the sum of its per-name totals in sorted
// order; the merged total is the sum of rank totals in rank order; sorting is stable by
// descending total. One deliberate difference: the window span is taken from events with
// dur > 0 (upstream Magpie's newer fix), so metadata / instant events ("Record Window End") far outside
// the profiled region do not stretch it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/fs.h"
#include "trace/api.h"
#include "trace/health.h"
#include "trace/reader.h"

namespace magpie::trace {

struct kernel_stat {
  std::string name;
  double total_us = 0;
  int64_t calls = 0;
  double min_us = 0, max_us = 0;
  std::vector<std::string> shapes;  ///< distinct non-empty shapes, first-seen order
  double avg_us() const { return calls ? total_us / static_cast<double>(calls) : 0.0; }
  /// Upstream Magpie's unique_shapes: the first 10 distinct shapes joined with "; ".
  std::string unique_shapes() const;
};

struct rank_result {
  int rank = 0;
  fs::path trace_file;
  double total_us = 0;
  std::vector<kernel_stat> kernels;  ///< sorted by total desc (truncated to top_k at the end)
  read_stats stats;
  uint64_t events_in_window = 0, events_after_filter = 0;
  bool has_span = false;               ///< some event has ts and dur > 0
  double span_start_us = 0, span_end_us = 0;  ///< [min ts, max ts+dur] over those events
  uint64_t missing_dur = 0;            ///< events counted that had no usable dur (counted as 0 µs)
  input_health health;                 ///< reader problems plus missing_dur
  // Run identity, from the trace's top-level keys ("" / -1 when absent).
  std::string device_name;
  int64_t world_size = -1, declared_rank = -1;
  std::vector<std::string> kernel_names;  ///< every aggregated name, before top-k truncation
};

struct gap_result {
  gap_config cfg;
  fs::path trace_dir;                ///< resolved directory that was searched
  std::vector<rank_result> ranks;
  std::vector<kernel_stat> merged;   ///< truncated to top_k
  double total_us = 0;               ///< untruncated merged total
  std::vector<fs::path> clamped_traces;
  std::vector<std::string> errors, warnings;
  std::string discovery_summary;     ///< which files were chosen and by which rule
  input_health health;               ///< all ranks' problems ("rank N (file): …")
};

/// One rank's statistics (untruncated). Data problems are in rank_result.stats.
status_or<rank_result> analyze_rank(const gap_config& cfg, int rank, const fs::path& trace_file);
/// Discovery (a single trace file is rank 0), every rank, merge and truncation. Missing
/// directories or traces, ranks claimed twice (without cfg.rank_files) and unreadable traces are
/// errors in the result (upstream Magpie's messages), not a status; ranks that do not look like one run
/// (device, world size, declared rank, disjoint time spans, few shared kernel names) are
/// warnings.
gap_result analyze_gap(const gap_config& cfg, const fs::path& trace_dir);

/// A gap analysis and where its files went (run_gap_analysis).
struct gap_outputs {
  gap_result result;
  std::optional<fs::path> csv_path;  ///< gap_analysis.csv; nullopt: no kernel events, nothing written
  fs::path output_dir;
};

/// Writes gap_analysis.csv, the per-rank CSVs and (cfg.clamped_traces) the clamped traces of
/// an analysed result into `out_dir` (r.clamped_traces and r.warnings are updated); returns
/// the CSV's path, nullopt when there were no kernel events (nothing is written).
status_or<std::optional<fs::path>> write_gap_outputs(gap_result& r, const fs::path& out_dir);

/// gap_analysis.csv text (rows end in "\r\n" as Python's csv module writes them). With kernel
/// sources, `preamble` lines (without '\n') come first, then upstream Magpie's "# Warning: columns …"
/// line, and `source_header` / `source_rows` (one per merged kernel) are appended to each row.
std::string gap_csv(const gap_result& r, const std::vector<std::string>& preamble = {},
                    const std::vector<std::string>& source_header = {},
                    const std::vector<std::vector<std::string>>& source_rows = {});
/// gap_analysis_rank<N>.csv text (percentages of that rank's total).
std::string gap_rank_csv(const rank_result& r);
/// Upstream Magpie's console summary (header, ranks, categories, total, table, "Output: <dir>").
std::string gap_console_summary(const gap_result& r, const fs::path& gap_dir);

/// Writes <out_dir>/<stem>_clamped_<start>_<end>.trace.json.gz for each rank (no category
/// filter; events overlapping the window, ts/dur clipped to it; other top-level keys kept).
status_or<std::vector<fs::path>> write_clamped_traces(const gap_config& cfg, const gap_result& r,
                                                      const fs::path& out_dir);

}  // namespace magpie::trace
