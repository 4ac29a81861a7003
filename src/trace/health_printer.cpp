#include "trace/health_printer.h"

#include "core/strings.h"

namespace magpie::trace {

namespace {

std::string count(uint64_t n, const char* one, const char* many) {
  return strprintf("%llu %s", static_cast<unsigned long long>(n), n == 1 ? one : many);
}

std::string events_have(uint64_t n, const char* what) { return count(n, "event has", "events have") + what; }

std::string sentence(const read_problem& p) {
  using k = read_problem_kind;
  switch (p.kind) {
    case k::empty_file: return "the file is empty";
    case k::not_a_trace: return "not a readable trace: " + p.detail;
    case k::read_stopped:
      return "reading stopped early: " + p.detail + "; only the " + count(p.count, "event", "events") +
             " before it are analysed";
    case k::no_trace_events: return "no \"traceEvents\" list: not a PyTorch-profiler (Chrome) trace";
    case k::no_events: return "the trace holds no events";
    case k::non_object_elements: return count(p.count, "element", "elements") + " of traceEvents not an object (skipped)";
    case k::bad_ts: return events_have(p.count, " a \"ts\" that is not a number (null, string, …): no timestamp");
    case k::bad_dur: return events_have(p.count, " a \"dur\" that is not a number (null, string, …): no duration");
    case k::negative_dur: return events_have(p.count, " a negative \"dur\" (taken as 0)");
    case k::bad_other_fields: return events_have(p.count, " other fields of the wrong type (ignored)");
    case k::dropped_no_ts:
      return count(p.count, "kernel / op / runtime event", "kernel / op / runtime events") + " without a usable \"ts\" dropped";
    case k::gpu_missing_dur:
      return strprintf("%llu of %llu GPU events without a usable \"dur\": kept as 0 µs, so busy and kernel times are "
                       "understated",
                       static_cast<unsigned long long>(p.count), static_cast<unsigned long long>(p.of));
    case k::counted_missing_dur:
      return strprintf("%llu of %llu counted events without a usable \"dur\" (counted as 0 us)",
                       static_cast<unsigned long long>(p.count), static_cast<unsigned long long>(p.of));
    case k::no_gpu_events:
      return "no GPU events (cat kernel, gpu_memcpy, gpu_memset): was the profiler run with ProfilerActivity.CUDA?";
    case k::rank_unreadable: return p.detail;
  }
  return p.detail;
}

}  // namespace

const char* input_status_name(input_status s) {
  switch (s) {
    case input_status::ok: return "ok";
    case input_status::partial: return "partial";
    case input_status::unusable: return "unusable";
  }
  return "ok";
}

std::string problem_text(const read_problem& p) { return p.scope.empty() ? sentence(p) : p.scope + ": " + sentence(p); }

std::vector<std::string> problem_texts(const input_health& h) {
  std::vector<std::string> out;
  out.reserve(h.problems.size());
  for (const auto& p : h.problems) out.push_back(problem_text(p));
  return out;
}

json input_health_json(const input_health& h) {
  return json{{"status", input_status_name(h.status)}, {"problems", problem_texts(h)}};
}

}  // namespace magpie::trace
