#include "trace/health.h"

namespace magpie::trace {

namespace {

read_problem row(read_problem_kind k, input_status s, uint64_t n = 1, std::optional<uint64_t> first = std::nullopt,
                 std::string detail = {}) {
  read_problem p;
  p.kind = k;
  p.severity = s;
  p.count = n;
  p.first_offset = first;
  p.detail = std::move(detail);
  return p;
}

/// A partial-severity row for `n` affected elements first seen at traceEvents[first] (none when n == 0).
void add_count(input_health& h, read_problem_kind k, uint64_t n, uint64_t first) {
  if (n) h.add(row(k, input_status::partial, n, first));
}

}  // namespace

void input_health::add(read_problem p) {
  if (static_cast<int>(p.severity) > static_cast<int>(status)) status = p.severity;
  problems.push_back(std::move(p));
}

input_health check_read(const read_stats& st) {
  input_health h;
  if (st.file_bytes == 0 && st.json_bytes == 0) {
    h.add(row(read_problem_kind::empty_file, input_status::unusable));
    return h;
  }
  if (!st.complete) {
    if (st.events == 0)
      h.add(row(read_problem_kind::not_a_trace, input_status::unusable, 1, st.error_offset, st.error));
    else
      h.add(row(read_problem_kind::read_stopped, input_status::partial, st.events, st.error_offset, st.error));
  } else if (!st.has_trace_events) {
    h.add(row(read_problem_kind::no_trace_events, input_status::unusable));
  } else if (st.events == 0) {
    h.add(row(read_problem_kind::no_events, input_status::unusable));
  }
  add_count(h, read_problem_kind::non_object_elements, st.non_object_elements, st.first_non_object);
  add_count(h, read_problem_kind::bad_ts, st.events_bad_ts, st.first_bad_ts);
  add_count(h, read_problem_kind::bad_dur, st.events_bad_dur, st.first_bad_dur);
  add_count(h, read_problem_kind::negative_dur, st.events_negative_dur, st.first_negative_dur);
  add_count(h, read_problem_kind::bad_other_fields, st.events_bad_other, st.first_bad_other);
  return h;
}

input_health check_model(const trace_model& m, bool need_gpu) {
  input_health h = check_read(m.stats);
  add_count(h, read_problem_kind::dropped_no_ts, m.dropped_no_ts, m.first_no_ts);
  if (m.gpu_missing_dur) {
    read_problem p = row(read_problem_kind::gpu_missing_dur, input_status::partial, m.gpu_missing_dur, m.first_gpu_missing_dur);
    p.of = m.gpu.size();
    h.add(std::move(p));
  }
  if (need_gpu && h.usable() && m.gpu.empty()) h.add(row(read_problem_kind::no_gpu_events, input_status::unusable));
  return h;
}

}  // namespace magpie::trace
