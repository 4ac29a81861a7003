// Input health of a trace: what could not be read or was dropped, as a typed counter table
// (one row per problem kind: severity, count, where it first happened; perfetto's stats table
// is the model), and whether the result is usable. Every trace command prints these problems on
// stderr and maps the status to its exit code (docs/trace-analysis.md, "Bad input"):
//   ok        the whole document was read and every analysed event was well-formed;
//   partial   something was lost (reading stopped early, events dropped or malformed): the
//             outputs are written and marked partial; commands exit 3 unless --allow-partial;
//   unusable  nothing to analyse (unreadable, empty, not a trace, no events, or no GPU events
//             where the command needs them): commands exit 1 and write nothing.
// The sentences and the {"status", "problems"} JSON are printed by trace/health_printer.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/model.h"
#include "trace/reader.h"

namespace magpie::trace {

enum class input_status { ok, partial, unusable };

/// What was wrong with a trace's input (one row of the table each).
enum class read_problem_kind {
  empty_file,           ///< no bytes at all
  not_a_trace,          ///< reading failed before any event (detail: the reader's error)
  read_stopped,         ///< reading failed after `count` events (detail: the reader's error)
  no_trace_events,      ///< a root object without "traceEvents"
  no_events,            ///< traceEvents is empty
  non_object_elements,  ///< elements of traceEvents that are not objects (skipped)
  bad_ts,               ///< events whose "ts" is not a number (no timestamp)
  bad_dur,              ///< events whose "dur" is not a number (no duration)
  negative_dur,         ///< events whose "dur" < 0 (taken as 0)
  bad_other_fields,     ///< events with another field of the wrong type (ignored)
  dropped_no_ts,        ///< kernel / op / runtime events without a usable ts (dropped by the model)
  gpu_missing_dur,      ///< GPU events without a usable dur (kept as 0; `of`: GPU events)
  counted_missing_dur,  ///< gap analysis: counted events without a usable dur (`of`: counted events)
  no_gpu_events,        ///< no kernel / memcpy / memset event where the command needs them
  rank_unreadable,      ///< gap analysis: a rank's file could not be read (detail: why)
};

/// One row of the table.
struct read_problem {
  read_problem_kind kind = read_problem_kind::not_a_trace;
  input_status severity = input_status::partial;
  uint64_t count = 1;                   ///< elements / events affected (1 for a whole-file problem)
  uint64_t of = 0;                      ///< the population `count` is out of (gpu/counted_missing_dur), else 0
  /// Where it first happened: the traceEvents index of the first affected element, or the
  /// uncompressed byte offset where reading stopped; nullopt when not tracked.
  std::optional<uint64_t> first_offset;
  std::string detail;                   ///< the reader's / loader's own words, where the kind has them
  std::string scope;                    ///< "" or the part it came from ("Rank 1 (trace.json)")
  bool operator==(const read_problem&) const = default;
};

struct input_health {
  input_status status = input_status::ok;
  std::vector<read_problem> problems;   ///< in the order found

  /// Adds a row; the status becomes the worse of it and the row's severity.
  void add(read_problem p);
  bool ok() const { return status == input_status::ok; }
  bool usable() const { return status != input_status::unusable; }
};

/// Problems seen by the reader alone: an incomplete document, non-object elements, mistyped
/// or negative ts / dur, an empty file, no traceEvents, no events.
input_health check_read(const read_stats& st);
/// check_read plus what the model dropped (events without ts, GPU events without dur). With
/// `need_gpu`, a trace without kernel / memcpy / memset events is unusable.
input_health check_model(const trace_model& m, bool need_gpu);

}  // namespace magpie::trace
