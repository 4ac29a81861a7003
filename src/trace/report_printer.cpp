#include "trace/report_printer.h"

#include <optional>

#include "trace/report.h"

namespace magpie::trace {

json trace_summary_json(const trace_summary& t) {
  return json{{"path", t.path.string()},
              {"device_name", t.device_name},
              {"device_count", t.device_count},
              {"events_kept", t.events_kept},
              {"cpu_ops", t.cpu_ops},
              {"runtime_events", t.runtime_events},
              {"gpu_events", t.gpu_events},
              {"annotations", t.annotations},
              {"linking_key", t.linking_key},
              {"gpu_linked", t.gpu_linked},
              {"gpu_unlinked", t.gpu_unlinked},
              {"gpu_linked_tracelens_rule", t.gpu_linked_tracelens},
              {"gpu_without_cpu_op", t.gpu_without_op},
              {"python_function_dropped", t.dropped_python},
              {"other_events_dropped", t.dropped_other},
              {"events_without_ts_dropped", t.dropped_no_ts},
              {"gpu_events_without_dur", t.gpu_missing_dur},
              {"negative_dur_set_to_zero", t.negative_dur},
              {"tree_bleeds_attached", t.tree_bleeds},
              {"stream_overruns_clipped", t.clipped_kernels},
              {"read", t.stats.to_json()}};
}

json trace_report_json(const report_result& r) {
  json j;
  j["trace"] = trace_summary_json(r.trace);
  j["input"] = r.input.to_json();
  if (r.input.usable()) {
    j["rules"] = rules_json(r.tracelens_compat, r.analysis);
    j["gpu_spec_choice"] = r.gpu_spec_choice;
    j["analysis"] = analysis_json(r.analysis);
    j["steps"] = split_json(r.steps, std::nullopt);
  }
  j["output_files"] = r.output_files;
  return j;
}

}  // namespace magpie::trace
