// Per-op and per-kernel tables with perf models and rooflines over a set of GPU events of a
// trace model (the whole trace, or one inference step).
//
// Op attribution (TraceLens's unified perf table, §2.4): each GPU event belongs to the
// outermost ancestor-or-self of its launcher op that has a perf model, else to the launcher op
// itself; GPU events with a runtime launch but no cpu_op become "<runtime>-><kernel> (Synthetic
// Op)"; unlinked GPU events have no op (they still count in the kernel table and timeline).
// An op instance's kernel time is the busy time (union) of its GPU events. Rows group
// instances with equal (name, Input Dims, Input type, Concrete Inputs, Input Strides).
//
// Roofline (§4.1): compute_us = flops / (peak TFLOP/s · 1e12) · 1e6, memory_us = bytes /
// (GB/s · 1e9) · 1e6, roofline time = max, bound = COMPUTE_BOUND if compute ≥ memory, Pct
// Roofline = 100 · roofline / kernel time. Per kernel, the flops and bytes of an op instance are
// split over its kernels in proportion to their durations.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpu/specs.h"
#include "trace/annotations.h"
#include "trace/model.h"
#include "trace/perf_model.h"
#include "trace/timeline.h"

namespace magpie::trace {

struct roofline_point {
  bool ok = false;
  double compute_us = 0, memory_us = 0, time_us = 0;
  std::string bound;  ///< COMPUTE_BOUND | MEMORY_BOUND
};
/// Needs flops > 0, bytes, and both ceilings for `compute_spec` in `spec`.
roofline_point roofline(double flops, std::optional<double> bytes, const std::string& compute_spec,
                        const gpu::gpu_spec* spec);

struct op_row {
  std::string name, category;
  std::string input_dims, input_type, concrete_inputs, input_strides;  ///< Python reprs
  uint64_t ex_uid = 0;            ///< first instance's UID
  int64_t operation_count = 0, num_kernels = 0;
  double kernel_time_us_sum = 0, kernel_time_us_mean = 0, time_pct = 0;
  perf_result model;              ///< of the first instance
  double gflops = 0;              ///< per instance
  std::optional<double> bytes;    ///< per instance
  double tflops_mean = 0, tbps_mean = 0;  ///< mean over instances of achieved rates
  roofline_point roof;            ///< per instance (static per shape)
  double pct_roofline_mean = 0;   ///< mean over instances
  bool has_roofline() const { return roof.ok; }
  /// "k=v,k=v" of the model parameters, and their compact sorted-key JSON.
  std::string param_signature() const;
  std::string params_json() const;
};

struct kernel_row {
  std::string name, category, top_op;
  int64_t calls = 0;
  double total_us = 0, min_us = 0, max_us = 0;  ///< raw durations (after stream-overrun clipping)
  double flops = 0, bytes = 0;    ///< attributed from modelled ops (0 when none)
  bool modelled = false;
  std::string compute_spec;       ///< of the largest attributed op
  roofline_point roof;            ///< of the attributed totals over total_us
  std::vector<int64_t> streams;
  double avg_us() const { return calls ? total_us / static_cast<double>(calls) : 0; }
};

/// TraceLens's per-op-name view (its ops_summary sheet): every GPU event belongs to its launcher
/// (the innermost cpu_op around the launch, "execute" passed through, else the runtime event);
/// an instance's direct time is the busy time of its own kernels (NCCL excluded), its subtree
/// time that of every kernel launched under it (NCCL included). Unlinked GPU events have none;
/// with `tracelens_links`, "linked" is TraceLens's rule (trace_event::tracelens_linked) and busy
/// times use its µs double arithmetic.
struct name_row {
  std::string name;
  double direct_us = 0, subtree_us = 0;  ///< sums over instances, µs
  int64_t count = 0;                     ///< launcher instances
  std::vector<std::string> categories;   ///< sorted, unique (TraceLens op categories)
  double pct = 0, cum_pct = 0;           ///< of the summed direct time
};
std::vector<name_row> ops_by_name(const trace_model& m, const std::vector<uint32_t>& gpu_events,
                                  bool tracelens_links = false);
/// TraceLens's ops_summary.csv columns.
std::string ops_by_name_csv(const std::vector<name_row>& rows);

struct analysis_options {
  /// TraceLens's default GPU-timeline set: only the GPU events it links (trace_event::
  /// tracelens_linked). magpie's default counts every GPU event: a GPU is busy whether or not
  /// the profiler linked the launch. Also makes the timeline and ops_by_name use TraceLens's
  /// links and µs double arithmetic (timeline.h).
  bool linked_only_timeline = false;
};

struct analysis {
  timeline_breakdown timeline;
  std::string timeline_rule;        ///< which GPU events the timeline counts (said in reports)
  size_t timeline_excluded = 0;     ///< GPU events left out of the timeline by the rule
  std::vector<name_row> ops_by_name;
  std::vector<op_row> ops;          ///< sorted by kernel time sum desc, then ex_uid
  std::vector<kernel_row> kernels;  ///< sorted by total desc
  std::map<std::string, double> category_busy_us;  ///< union of each kernel category
  double ops_kernel_time_us = 0;    ///< Σ op rows (Percentage base)
  double kernels_total_us = 0;      ///< Σ kernel durations
  int64_t unlinked_gpu_events = 0;
  const gpu::gpu_spec* spec = nullptr;
};

/// Step annotations of the model (user_annotation events that parse), sorted by ts.
struct step_span {
  uint32_t event = k_none;
  step_annotation ann;
  int64_t ts = 0, end = 0;
};
std::vector<step_span> step_spans(const trace_model& m);

/// Analyses `gpu_events` (indices into m.events; all GPU events when empty and `all`).
analysis analyze(const trace_model& m, const std::vector<uint32_t>& gpu_events, const gpu::gpu_spec* spec,
                 const std::vector<step_span>& steps, const analysis_options& opts = {});

/// Tables as CSV text (JSON: analysis_json, trace/analysis_printer.h).
std::string ops_csv(const analysis& a);
std::string kernels_csv(const analysis& a);
/// Upstream Magpie's <label>_ISL…_kernel_roofline_simple.csv (research magpie.md §7.4): roofline
/// columns only when a spec is given, as upstream Magpie does when TraceLens had an arch file.
std::string roofline_simple_csv(const analysis& a);

}  // namespace magpie::trace
