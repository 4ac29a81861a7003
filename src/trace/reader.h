// Streaming reader for PyTorch-profiler (Kineto) Chrome traces: .json or .json.gz (gzip is
// detected from the first bytes, not the name; concatenated gzip members are read), root
// object {"traceEvents": [...], other keys} or a bare list of events.
//
// Memory: a bounded input window (default 256 KiB, grown only for a single event larger than it)
// plus whatever the sink keeps; no event is materialised unless the sink copies it. Errors in
// the data (invalid JSON, truncated JSON or gzip, CRC mismatch, non-object elements, fields of
// the wrong type) are counted in read_stats and never abort the process; reading stops at the
// first syntax error and everything before it has been delivered.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/fs.h"
#include "core/json.h"
#include "core/status.h"

namespace magpie::trace {

/// One trace event, as views into the reader's window: valid only during on_event().
struct event_view {
  uint64_t index = 0;         ///< position in traceEvents (TraceLens's UID), all elements counted
  std::string_view ph, cat, name;
  bool has_name = false, has_cat = false;
  bool has_ts = false, has_dur = false;
  double ts = 0, dur = 0;     ///< µs as parsed doubles (Python json semantics)
  int64_t ts_ns = 0, dur_ns = 0;  ///< the same values as exact integer nanoseconds
  // pid / tid are numbers (CPU pid, GPU device) or strings ("Spans", "Traces").
  bool has_pid = false, has_tid = false;
  int64_t pid = 0, tid = 0;
  std::string_view pid_str, tid_str;  ///< non-empty view when the value was a string
  bool pid_is_str = false, tid_is_str = false;
  bool has_id = false;        ///< flow id ("id", ac2g s/f events)
  int64_t id = 0;
  std::string_view bp;        ///< flow binding point ("e")
  // args
  bool has_external_id = false, has_correlation = false, has_stream = false, has_device = false;
  int64_t external_id = 0, correlation = 0, stream = 0, device = 0;
  bool has_sequence_number = false;
  int64_t sequence_number = 0;
  /// Raw JSON text of these args (empty view when absent), e.g. "[[8192, 1024], [2, 48]]".
  std::string_view input_dims, input_type, input_strides, concrete_inputs, grid, block;
  /// NCCL collective metadata copied by Kineto (raw JSON text when present).
  std::string_view collective_name, group_size, in_msg_nelems, out_msg_nelems, dtype, pg_name;
  uint32_t bad_fields = 0;    ///< known keys whose value had the wrong type (ignored)
  bool bad_ts = false, bad_dur = false;  ///< "ts" / "dur" present but not a usable number
  // Positions for rewriting (clamped traces): whole event text and the ts / dur value texts.
  std::string_view raw, ts_text, dur_text;
  /// Member-wise (views compare their text). The reader blanks events with zero bytes, which a
  /// unit test checks equals event_view{}: every default above must stay all-zero bytes.
  bool operator==(const event_view&) const = default;
};

class event_sink {
 public:
  virtual ~event_sink() = default;
  /// Every element of traceEvents that is a JSON object, in file order.
  virtual void on_event(const event_view& e) = 0;
  /// The document's root: a list of events (true) or an object.
  virtual void on_root_begin(bool is_list) { (void)is_list; }
  /// The traceEvents array (or the bare-list root) starts / ends.
  virtual void on_trace_events_begin() {}
  virtual void on_trace_events_end() {}
  /// Every top-level key other than traceEvents (root object only), with its raw JSON text.
  virtual void on_top_level(std::string_view key, std::string_view raw_json) {
    (void)key;
    (void)raw_json;
  }
};

struct read_options {
  size_t window_bytes = 256u << 10;      ///< initial input window (L2-sized: parsed while cached)
  size_t max_event_bytes = 1024u << 20;  ///< one element larger than this is an error
  bool threaded_inflate = true;          ///< inflate .gz on a second thread (pipelined)
  bool show_progress = true;             ///< progress bar on stderr (drawn only on a terminal)
};

struct read_stats {
  std::string path;
  bool gzip = false;
  bool root_is_list = false;       ///< bare list root
  bool has_trace_events = false;   ///< root object had "traceEvents" (or root is a list)
  uint64_t file_bytes = 0;         ///< size on disk
  uint64_t json_bytes = 0;         ///< uncompressed bytes consumed
  uint64_t events = 0;             ///< object elements delivered to the sink
  uint64_t non_object_elements = 0;  ///< elements of traceEvents that are not objects (skipped)
  uint64_t events_with_bad_fields = 0;
  uint64_t events_bad_ts = 0;      ///< "ts" present but null, a string, … (event has no ts)
  uint64_t events_bad_dur = 0;     ///< "dur" present but not a usable number (event has no dur)
  uint64_t events_negative_dur = 0;  ///< "dur" < 0 (consumers treat it as 0)
  uint64_t events_bad_other = 0;   ///< events with a mistyped field other than ts / dur
  /// traceEvents index of the first element counted in each of the five counts above (0 while
  /// the count is 0; not in read_stats_json).
  uint64_t first_non_object = 0, first_bad_ts = 0, first_bad_dur = 0, first_negative_dur = 0, first_bad_other = 0;
  bool complete = true;            ///< the whole document was read and valid
  std::string error;               ///< why not complete: "<what> at byte N" (uncompressed offset)
  uint64_t error_offset = 0;
  double seconds = 0;              ///< wall time of the read
};

/// Reads `path`, calling `sink` for each event. Status errors only for paths that cannot be
/// opened or read (io) or that name a directory — everything about the content is in read_stats.
status_or<read_stats> read_trace(const fs::path& path, event_sink& sink, const read_options& opts = {});

/// The same over bytes in memory (tests, fuzzing); gzip is detected as for files.
read_stats read_trace_bytes(std::string_view bytes, event_sink& sink, const read_options& opts = {});

}  // namespace magpie::trace
