#include "trace/analysis_printer.h"

#include "trace/stage_codec.h"

namespace magpie::trace {

json timeline_json(const timeline_breakdown& t) {
  json rows = json::array();
  for (const auto& r : t.rows()) rows.push_back(json{{"type", r.type}, {"time ms", r.ms()}, {"percent", r.percent()}});
  return rows;
}

json communication_json(const timeline_breakdown& t) {
  const int64_t overlapped = t.total_comm - t.exposed_comm;
  return {{"total_ns", t.total_comm},
          {"exposed_ns", t.exposed_comm},
          {"overlapped_ns", overlapped},
          {"overlapped_pct",
           t.total_comm > 0 ? 100.0 * static_cast<double>(overlapped) / static_cast<double>(t.total_comm) : 0.0}};
}

namespace {

json steps_json(const stage_split& s) {
  json a = json::array();
  for (const auto& st : s.steps) {
    json j{{"idx", st.idx},
           {"name", st.name},
           {"phase", st.phase},
           {"batch_size", st.batch_size},
           {"num_requests", st.num_requests},
           {"num_gpu_events", st.gpu.size()},
           {"gpu_duration_us", static_cast<double>(st.gpu_duration) / 1000.0},
           {"gpu_busy_us", static_cast<double>(st.gpu_busy) / 1000.0},
           {"start_ts_us", static_cast<double>(st.cpu_ts) / 1000.0},
           {"end_ts_us", static_cast<double>(st.cpu_end) / 1000.0}};
    if (st.ann) j["annotation"] = step_annotation_json(*st.ann);
    a.push_back(j);
  }
  return a;
}

}  // namespace

json read_stats_json(const read_stats& s) {
  return json{{"path", s.path},
              {"gzip", s.gzip},
              {"root", s.root_is_list ? "list" : "object"},
              {"has_trace_events", s.has_trace_events},
              {"file_bytes", s.file_bytes},
              {"json_bytes", s.json_bytes},
              {"events", s.events},
              {"non_object_elements", s.non_object_elements},
              {"events_with_bad_fields", s.events_with_bad_fields},
              {"events_bad_ts", s.events_bad_ts},
              {"events_bad_dur", s.events_bad_dur},
              {"events_negative_dur", s.events_negative_dur},
              {"events_bad_other", s.events_bad_other},
              {"complete", s.complete},
              {"error", s.error},
              {"error_offset", s.error_offset},
              {"seconds", s.seconds}};
}

json step_annotation_json(const step_annotation& a) {
  return json{{"format", a.format},   {"detailed", a.detailed}, {"phase", a.phase()},   {"batch_size", a.batch_size},
              {"num_requests", a.num_requests}, {"c_reqs", a.c_reqs}, {"c_sq", a.c_sq}, {"c_sk", a.c_sk},
              {"c_sqsq", a.c_sqsq},   {"c_sqsk", a.c_sqsk},     {"g_reqs", a.g_reqs},   {"g_sq", a.g_sq},
              {"g_sk", a.g_sk},       {"g_sqsq", a.g_sqsq},     {"g_sqsk", a.g_sqsk}};
}

json phase_pick_json(const phase_pick& p, const stage_split& s) {
  json j{{"stage", p.stage}, {"output_label", p.label}, {"selection_reason", p.selection_reason}};
  if (!p.step) {
    j["row_index"] = nullptr;
    return j;
  }
  const step_info& st = s.steps[*p.step];
  j["row_index"] = st.idx;
  j["step_name"] = st.name;
  j["batch_size"] = st.batch_size;
  j["phase_avg_conc"] = st.num_requests;
  j["num_gpu_events"] = st.gpu.size();
  j["gpu_duration"] = static_cast<double>(st.gpu_duration) / 1000.0;
  j["gpu_busy_duration"] = static_cast<double>(st.gpu_busy) / 1000.0;
  return j;
}

json rules_json(bool tracelens_compat, const analysis& a) {
  return json{{"mode", tracelens_compat ? "tracelens" : "magpie"},
              {"gpu_timeline", a.timeline_rule},
              {"gpu_timeline_events_excluded", a.timeline_excluded},
              {"kernel_durations", tracelens_compat ? "raw dur (TraceLens)"
                                                    : "clipped where a kernel overruns the next one on its stream"},
              {"host_tree", tracelens_compat ? "events ending >= 1 us after their parent left out (TraceLens)"
                                             : "events ending after their parent attached"},
              {"op_attribution", "ops.csv: outermost modelled op (TraceLens unified_perf_summary); ops_by_name.csv: each "
                                 "launcher op's own kernels (TraceLens ops_summary)"}};
}

json split_json(const stage_split& s, std::optional<int64_t> conc) {
  json j{{"source", s.source}, {"phase_method", s.phase_method}, {"notes", s.notes}, {"steps", steps_json(s)}};
  j["undecided"] = s.undecided.empty() ? json(nullptr) : json(s.undecided);
  json picks = json::object();
  for (inference_stage st : k_inference_stages) picks[inference_stage_name(st)] = phase_pick_json(pick_step(s, st, conc), s);
  j["phase_picks"] = picks;
  return j;
}

}  // namespace magpie::trace
