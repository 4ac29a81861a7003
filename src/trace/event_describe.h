// Every field of a trace event as one line of text (views by their bytes): for comparing two
// reads of the same trace field by field (the reader's tests and its differential fuzz target).
#pragma once

#include <string>

#include "trace/reader.h"

namespace magpie::trace {

inline std::string describe_event(const event_view& e) {
  std::string s;
  auto v = [&](const char* name, std::string_view x) { s.append(name).append("=").append(x).append(";"); };
  auto n = [&](const char* name, int64_t x) { v(name, std::to_string(x)); };
  auto d = [&](const char* name, double x) { v(name, std::to_string(x)); };
  v("ph", e.ph), v("cat", e.cat), v("name", e.name), n("has_name", e.has_name), n("has_cat", e.has_cat);
  n("has_ts", e.has_ts), n("has_dur", e.has_dur), d("ts", e.ts), d("dur", e.dur), n("ts_ns", e.ts_ns);
  n("dur_ns", e.dur_ns), n("has_pid", e.has_pid), n("has_tid", e.has_tid), n("pid", e.pid), n("tid", e.tid);
  v("pid_str", e.pid_str), v("tid_str", e.tid_str), n("pid_is_str", e.pid_is_str), n("tid_is_str", e.tid_is_str);
  n("has_id", e.has_id), n("id", e.id), v("bp", e.bp);
  n("ext", e.has_external_id ? e.external_id : -1), n("corr", e.has_correlation ? e.correlation : -1);
  n("stream", e.has_stream ? e.stream : -1), n("device", e.has_device ? e.device : -1);
  n("seq", e.has_sequence_number ? e.sequence_number : -1), v("dims", e.input_dims), v("type", e.input_type);
  v("strides", e.input_strides), v("concrete", e.concrete_inputs), v("grid", e.grid), v("block", e.block);
  v("coll", e.collective_name), v("group", e.group_size), v("in", e.in_msg_nelems), v("out", e.out_msg_nelems);
  v("dtype", e.dtype), v("pg", e.pg_name), n("bad", e.bad_fields), n("bad_ts", e.bad_ts), n("bad_dur", e.bad_dur);
  v("ts_text", e.ts_text), v("dur_text", e.dur_text), v("raw", e.raw), n("index", static_cast<int64_t>(e.index));
  return s;
}

}  // namespace magpie::trace
