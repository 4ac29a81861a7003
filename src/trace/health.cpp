#include "trace/health.h"

#include "core/strings.h"

namespace magpie::trace {

namespace {

std::string count(uint64_t n, const char* one, const char* many) {
  return strprintf("%llu %s", static_cast<unsigned long long>(n), n == 1 ? one : many);
}

}  // namespace

void input_health::add(input_status s, std::string problem) {
  if (static_cast<int>(s) > static_cast<int>(status)) status = s;
  problems.push_back(std::move(problem));
}

const char* input_health::status_name() const {
  switch (status) {
    case input_status::ok: return "ok";
    case input_status::partial: return "partial";
    case input_status::unusable: return "unusable";
  }
  return "ok";
}

json input_health::to_json() const { return json{{"status", status_name()}, {"problems", problems}}; }

input_health check_read(const read_stats& st) {
  input_health h;
  if (st.file_bytes == 0 && st.json_bytes == 0) {
    h.add(input_status::unusable, "the file is empty");
    return h;
  }
  if (!st.complete) {
    if (st.events == 0)
      h.add(input_status::unusable, "not a readable trace: " + st.error);
    else
      h.add(input_status::partial, "reading stopped early: " + st.error + "; only the " +
                                       count(st.events, "event", "events") + " before it are analysed");
  } else if (!st.has_trace_events) {
    h.add(input_status::unusable, "no \"traceEvents\" list: not a PyTorch-profiler (Chrome) trace");
  } else if (st.events == 0) {
    h.add(input_status::unusable, "the trace holds no events");
  }
  if (st.non_object_elements)
    h.add(input_status::partial, count(st.non_object_elements, "element", "elements") +
                                     " of traceEvents not an object (skipped)");
  if (st.events_bad_ts)
    h.add(input_status::partial, count(st.events_bad_ts, "event has", "events have") +
                                     " a \"ts\" that is not a number (null, string, …): no timestamp");
  if (st.events_bad_dur)
    h.add(input_status::partial, count(st.events_bad_dur, "event has", "events have") +
                                     " a \"dur\" that is not a number (null, string, …): no duration");
  if (st.events_negative_dur)
    h.add(input_status::partial,
          count(st.events_negative_dur, "event has", "events have") + " a negative \"dur\" (taken as 0)");
  if (st.events_bad_other)
    h.add(input_status::partial,
          count(st.events_bad_other, "event has", "events have") + " other fields of the wrong type (ignored)");
  return h;
}

input_health check_model(const trace_model& m, bool need_gpu) {
  input_health h = check_read(m.stats);
  if (m.dropped_no_ts)
    h.add(input_status::partial, count(m.dropped_no_ts, "kernel / op / runtime event", "kernel / op / runtime events") +
                                     " without a usable \"ts\" dropped");
  if (m.gpu_missing_dur)
    h.add(input_status::partial,
          strprintf("%llu of %zu GPU events without a usable \"dur\": kept as 0 µs, so busy and kernel times are "
                    "understated",
                    static_cast<unsigned long long>(m.gpu_missing_dur), m.gpu.size()));
  if (need_gpu && h.usable() && m.gpu.empty())
    h.add(input_status::unusable, "no GPU events (cat kernel, gpu_memcpy, gpu_memset): was the profiler run "
                                  "with ProfilerActivity.CUDA?");
  return h;
}

}  // namespace magpie::trace
