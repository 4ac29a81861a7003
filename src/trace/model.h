// In-memory model of one trace for the richer analyses (timeline, perf models, roofline,
// inference stages): only the events these need are kept, compactly (names and argument
// texts interned; times as exact integer nanoseconds). python_function, flow-less
// instants, metadata and overhead events are counted and dropped while streaming.
//
// Linking (TraceLens's rules, research tracelens.md §1.4, §2.1):
//   * GPU event → launching runtime/driver event: equal "correlation" (graph launches give every
//     replayed kernel the launch's correlation, so one cudaGraphLaunch links many kernels); for
//     GPU events without correlation the ac2g flow end at the same (pid, tid, ts) gives the id;
//     traces with no correlation at all fall back to "External id".
//   * Host call tree per (pid, tid): events stably sorted by ts, a stack popped while
//     ts >= top.end. An event that ends after its parent ("bleed") is attached anyway — a
//     deliberate fix: TraceLens drops such events from the tree when the overlap is ≥ 1 µs.
//   * Launcher op of a GPU event = innermost cpu_op enclosing the runtime event (a cpu_op named
//     "execute" is passed through), else the cpu_op with the runtime event's External id.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/fs.h"
#include "core/status.h"
#include "trace/chunked_store.h"
#include "trace/reader.h"
#include "trace/util.h"

namespace magpie::trace {

enum class ev_kind : uint8_t {
  cpu_op,
  runtime,          ///< cuda_runtime / cuda_driver (and HIP's equivalents)
  kernel,
  memcpy,           ///< gpu_memcpy
  memset,           ///< gpu_memset
  user_annotation,  ///< record_function ranges on the CPU (step annotations)
  gpu_user_annotation,
};

constexpr uint32_t k_none = 0xFFFFFFFFu;

/// One kept event, 40 bytes (a 500 MB trace keeps over a million of these: its size is the
/// report's memory). Host events (cpu_op, runtime, annotations) and GPU events share storage:
/// parent / uid / args / ids exist for host events, launcher / op / stream / device for GPU
/// events. Ids keep their low 32 bits; an id outside [0, 2^32) sets wide_ids (the full values
/// are in trace_model::wide_ids).
struct trace_event {
  int64_t ts = 0;             ///< ns
  uint32_t dur_lo = 0;        ///< dur() in ns = dur_hi << 32 | dur_lo (48 bits: 78 hours)
  uint32_t name = k_none;     ///< interned
  uint32_t thread = k_none;   ///< interned "pid/tid" key
  union {
    struct {
      uint32_t parent;        ///< host tree parent (index into events)
      uint32_t uid;           ///< index in traceEvents (TraceLens UID)
      union {
        uint32_t args;        ///< cpu_op: index into trace_model::arg_tuples (0: none)
        uint32_t correlation; ///< runtime events: args.correlation (trace_model::correlation_of)
      };
      uint32_t external_id;   ///< args "External id" (trace_model::external_id_of)
    };
    struct {
      /// GPU events: runtime event that launched it. Until linking (load_trace_model) it holds
      /// the link id instead: the correlation, else the External id.
      uint32_t launcher;
      uint32_t op;            ///< GPU events: launcher cpu_op (innermost)
      int32_t stream;         ///< args.stream, else the GPU tid
      int16_t device;         ///< args.device, else the GPU pid
    };
  };
  uint16_t dur_hi = 0;
  ev_kind kind = ev_kind::cpu_op;
  bool has_correlation : 1 = false;
  bool has_external_id : 1 = false;
  bool via_driver : 1 = false;  ///< runtime event of cat cuda_driver (cuLaunchKernel…)
  bool op_from_ext : 1 = false; ///< GPU events: op found by External id, not in the host tree
  /// GPU events: linked by TraceLens's rule (a graph launch with the same correlation, or an
  /// ac2g flow start and end with the launch's correlation) — its `tree` flag.
  bool tracelens_linked : 1 = false;
  bool wide_ids : 1 = false;    ///< the ids did not fit 32 bits (trace_model::wide_ids)

  trace_event() : parent(k_none), uid(0), args(0), external_id(0) {}
  int64_t dur() const { return static_cast<int64_t>((uint64_t{dur_hi} << 32) | dur_lo); }
  void set_dur(int64_t ns) {  // clamped to [0, 2^48)
    uint64_t v = ns <= 0 ? 0 : std::min<uint64_t>(static_cast<uint64_t>(ns), (uint64_t{1} << 48) - 1);
    dur_lo = static_cast<uint32_t>(v);
    dur_hi = static_cast<uint16_t>(v >> 32);
  }
  int64_t end() const { return ts + dur(); }
  bool is_gpu() const { return kind == ev_kind::kernel || kind == ev_kind::memcpy || kind == ev_kind::memset; }
};
static_assert(sizeof(trace_event) == 40, "trace_event is the model's memory: keep it at 40 bytes");

/// Raw argument texts of a cpu_op (interned ids; k_none when absent).
struct arg_texts {
  uint32_t dims = k_none, types = k_none, concrete = k_none, strides = k_none;
  bool operator==(const arg_texts&) const = default;
};

struct trace_summary;  // below
struct trace_model {
  fs::path path;
  read_stats stats;
  interner strings;                 ///< names, thread keys and raw argument texts
  chunked_store<trace_event> events;  ///< kept events, file order (no reallocation peaks)
  std::vector<arg_texts> arg_tuples = {arg_texts{}};  ///< distinct cpu_op argument tuples; [0]: none
  /// Ids of events whose correlation / External id did not fit 32 bits (rare; usually empty).
  std::unordered_map<uint32_t, std::pair<int64_t, int64_t>> wide_ids;
  std::vector<uint32_t> gpu;        ///< kernel / memcpy / memset, sorted by ts
  std::vector<uint32_t> cpu_ops, runtimes, annotations, gpu_annotations;
  std::string device_name;          ///< deviceProperties[0].name ("" when absent)
  int device_count = 0;
  std::string linking_key;          ///< "correlation" | "External id" | "none"
  uint64_t dropped_python = 0, dropped_other = 0;
  uint64_t dropped_no_ts = 0;       ///< events of analysed categories without a usable ts
  uint64_t gpu_missing_dur = 0;     ///< GPU events without a usable dur (kept with dur 0)
  /// traceEvents index of the first event counted in dropped_no_ts / gpu_missing_dur (0 while 0).
  uint64_t first_no_ts = 0, first_gpu_missing_dur = 0;
  uint64_t negative_dur = 0;        ///< kept events whose dur was negative (set to 0)
  uint64_t gpu_linked = 0, gpu_unlinked = 0, gpu_without_op = 0;
  uint64_t gpu_linked_tracelens = 0;  ///< GPU events TraceLens links (its timeline's default set)
  uint64_t tree_bleeds = 0;         ///< events ending after their parent (attached, or dropped by the TraceLens rule)
  uint64_t clipped_kernels = 0;     ///< GPU events whose dur overran the next one on their stream

  /// Per interned name of a kernel / memset: its timeline class + 1 (0: not a GPU event name);
  /// filled at load so the per-event classification is a lookup (timeline.h).
  std::vector<uint8_t> gpu_name_class;

  const std::string& name(const trace_event& e) const { return strings.str(e.name); }
  /// Argument texts of a cpu_op (all k_none for other events).
  const arg_texts& args(const trace_event& e) const { return arg_tuples[e.kind == ev_kind::cpu_op ? e.args : 0]; }
  /// Ids of a host event (correlation: runtime events; External id: cpu_op and runtime events).
  int64_t correlation_of(uint32_t i) const;
  int64_t external_id_of(uint32_t i) const;
  std::string_view text(uint32_t id) const { return id == k_none ? std::string_view() : std::string_view(strings.str(id)); }
  /// Summary counts for reports (printed by trace_summary_json, trace/report_printer.h).
  struct trace_summary summary() const;
};

/// A loaded trace's counts for reports (report.json "trace"); member types as in trace_model.
struct trace_summary {
  fs::path path;
  std::string device_name;
  int device_count = 0;
  size_t events_kept = 0, cpu_ops = 0, runtime_events = 0, gpu_events = 0, annotations = 0;
  std::string linking_key;
  uint64_t gpu_linked = 0, gpu_unlinked = 0, gpu_linked_tracelens = 0, gpu_without_op = 0;
  uint64_t dropped_python = 0, dropped_other = 0, dropped_no_ts = 0, gpu_missing_dur = 0;
  uint64_t negative_dur = 0, tree_bleeds = 0, clipped_kernels = 0;
  read_stats stats;
};

struct model_options {
  /// Clip a GPU event's end to the start of the next event on the same stream (a serial
  /// stream cannot overlap itself; ROCm traces sometimes report overrunning durations —
  /// TraceLens issue #669). Perfetto clips too; TraceLens does not.
  bool clip_stream_overruns = true;
  /// TraceLens's tree rule: an event ending >= 1 µs after the enclosing one is left out of the
  /// tree (no parent, no children). magpie attaches it (counted in tree_bleeds).
  bool drop_bleeding_events = false;
  read_options read;
};

/// Streams `path` into a model and links it. Data problems are in model.stats.
status_or<trace_model> load_trace_model(const fs::path& path, const model_options& opts = {});

/// Ancestors of event `i` (parent first), following the host tree.
std::vector<uint32_t> ancestors(const trace_model& m, uint32_t i);

}  // namespace magpie::trace
