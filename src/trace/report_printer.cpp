#include "trace/report_printer.h"

#include <optional>

#include "trace/analysis_printer.h"
#include "trace/health_printer.h"
#include "trace/report.h"
#include "trace/stage_codec.h"

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
              {"read", read_stats_json(t.stats)}};
}

json trace_report_json(const report_result& r) {
  json j;
  j["trace"] = trace_summary_json(r.trace);
  j["input"] = input_health_json(r.input);
  if (r.input.usable()) {
    j["rules"] = rules_json(r.tracelens_compat, r.analysis);
    j["gpu_spec_choice"] = r.gpu_spec_choice;
    j["analysis"] = analysis_json(r.analysis);
    j["steps"] = split_json(r.steps, std::nullopt);
  }
  j["output_files"] = r.output_files;
  return j;
}

namespace {

json stage_result_json(const stage_result& s, const json& pick, bool tracelens_compat) {
  json r{{"stage", s.stage}, {"trace_path", s.trace_path.string()}, {"phase_pick", pick}};
  r["output_dir"] = s.output_dir.string();
  if (!s.pick.step) {
    r["error"] = s.error;
    r["files"] = json::array();
    return r;
  }
  r["files"] = s.files;
  r["simple_summary_file"] = s.simple_summary_file.string();
  r["gpu_timeline"] = timeline_json(s.analysis.timeline);
  r["rules"] = rules_json(tracelens_compat, s.analysis);
  return r;
}

}  // namespace

json inference_result_json(const inference_result& r) {
  json b;
  b["enabled"] = true;
  b["analysis_mode"] = "inference";
  b["engine"] = "magpie";
  b["analysis_stages"] = r.stages;
  b["export_format"] = r.export_format;
  b["tl_extension"] = nullptr;
  b["trace_dir"] = r.trace_dir.string();
  b["split_dir"] = (r.out_dir / "trace_split").string();
  b["capture_folder"] = nullptr;
  b["output_dir"] = r.out_dir.string();
  b["gpu_arch_platform"] = r.spec ? json(r.spec->name) : json(nullptr);
  b["phase_picks"] = json::object();
  b["stage_results"] = json::object();
  for (const auto& s : r.stage_results) {
    json pick = phase_pick_json(s.pick, r.split);
    b["phase_picks"][inference_stage_name(s.stage)] = pick;
    b["stage_results"][inference_stage_name(s.stage)] = stage_result_json(s, pick, r.tracelens_compat);
  }
  b["rank0_trace"] = r.rank0_trace ? json(r.rank0_trace->string()) : json(nullptr);
  if (r.input) b["input"] = input_health_json(*r.input);
  if (r.analysed) {
    b["gpu_spec_choice"] = r.gpu_spec_choice;
    b["split_source"] = r.split.source;
    b["phase_method"] = r.split.phase_method;
  }
  b["output_files"] = r.output_files;
  b["errors"] = r.errors;
  b["warnings"] = r.warnings;
  return b;
}

}  // namespace magpie::trace
