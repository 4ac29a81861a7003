// run_inference_analysis (api.h): Magpie's `analysis_mode: inference` on the native engine.
#include <algorithm>

#include "core/strings.h"
#include "trace/api.h"
#include "trace/health.h"
#include "trace/report.h"
#include "trace/xlsx.h"

namespace magpie::trace {
namespace {

status_or<std::vector<std::string>> canonical_stages(const std::vector<std::string>& in) {
  std::vector<std::string> stages;
  for (const auto& s : in) {
    if (to_lower(s) == "all") return std::vector<std::string>{"prefilldecode", "decode", "prefill"};
    std::string c = canonical_stage(s);
    if (c.empty()) return invalid_argument("unknown analysis stage '%s' (prefilldecode, decode, prefill, all)", s.c_str());
    if (std::find(stages.begin(), stages.end(), c) == stages.end()) stages.push_back(c);
  }
  return stages;
}

json block_head(const inference_config& cfg, const std::vector<std::string>& stages, const fs::path& trace_dir,
                const fs::path& out_dir) {
  json b;
  b["enabled"] = true;
  b["analysis_mode"] = "inference";
  b["engine"] = "magpie";
  b["analysis_stages"] = stages;
  b["export_format"] = cfg.export_format;
  b["tl_extension"] = nullptr;
  b["trace_dir"] = trace_dir.string();
  b["split_dir"] = (out_dir / "trace_split").string();
  b["capture_folder"] = nullptr;
  b["output_dir"] = out_dir.string();
  b["gpu_arch_platform"] = nullptr;
  b["phase_picks"] = json::object();
  b["stage_results"] = json::object();
  return b;
}

}  // namespace

status_or<json> run_inference_analysis(const inference_config& cfg, const fs::path& trace_dir, const fs::path& out_dir) {
  MAGPIE_ASSIGN_OR_RETURN(std::vector<std::string> stages, canonical_stages(cfg.stages));
  MAGPIE_RETURN_IF_ERROR(check_export_format(cfg.export_format));
  json b = block_head(cfg, stages, trace_dir, out_dir);
  json errors = json::array(), warnings = json::array(), files = json::array();
  auto finish = [&]() {
    b["output_files"] = files;
    b["errors"] = errors;
    b["warnings"] = warnings;
    return b;
  };
  fs::path rank0 = cfg.trace_file.empty() ? find_rank0_trace(trace_dir) : cfg.trace_file;
  b["rank0_trace"] = rank0.empty() ? json(nullptr) : json(rank0.string());
  if (rank0.empty()) {
    errors.push_back("No rank-0 trace found in " + trace_dir.string());
    return finish();
  }
  auto loaded = load_trace_model(rank0, model_options_for(cfg.tracelens_compat));
  if (!loaded.ok()) {
    errors.push_back(rank0.filename().string() + ": " + loaded.get_status().message());
    return finish();
  }
  const trace_model& m = *loaded;
  input_health health = check_model(m, true);
  b["input"] = health.to_json();
  for (const auto& p : health.problems) (health.usable() ? warnings : errors).push_back(rank0.filename().string() + ": " + p);
  if (!health.usable()) return finish();
  MAGPIE_ASSIGN_OR_RETURN(spec_choice sc, choose_gpu_spec(cfg.gpu_spec_file, cfg.gpu_name, m.device_name, cfg.use_achievable));
  const gpu::gpu_spec* spec = sc.spec ? &*sc.spec : nullptr;
  if (spec) b["gpu_arch_platform"] = spec->name;
  else warnings.push_back(sc.how);
  b["gpu_spec_choice"] = sc.how;
  stage_split split = split_steps(m);
  b["split_source"] = split.source;
  b["phase_method"] = split.phase_method;
  for (const auto& n : split.notes) warnings.push_back(n);
  MAGPIE_RETURN_IF_ERROR(make_dirs(out_dir / "trace_split"));
  fs::path details = out_dir / "trace_split" / "execution_details.csv";
  MAGPIE_RETURN_IF_ERROR(write_file_atomic(details, execution_details_csv(split)));
  files.push_back(details.string());
  std::optional<int64_t> conc = parse_int(cfg.conc);
  std::vector<step_span> spans = step_spans(m);
  analysis_options opts{.linked_only_timeline = cfg.tracelens_compat};
  for (const auto& stage : stages) {
    phase_pick p = pick_step(split, stage, conc);
    b["phase_picks"][stage] = p.to_json(split);
    json r{{"stage", stage}, {"trace_path", rank0.string()}, {"phase_pick", b["phase_picks"][stage]}};
    fs::path dir = out_dir / p.label;
    r["output_dir"] = dir.string();
    if (!p.step) {
      r["error"] = p.selection_reason;
      r["files"] = json::array();
      warnings.push_back(stage + ": " + p.selection_reason);
      b["stage_results"][stage] = r;
      continue;
    }
    analysis a = analyze(m, split.steps[*p.step].gpu, spec, spans, opts);
    json fl = json::array();
    MAGPIE_RETURN_IF_ERROR(write_analysis_files(dir, a, cfg.export_format == "excel", p.label + ".xlsx", {}, &fl));
    fs::path simple = out_dir / (p.label + "_ISL" + label_value(cfg.isl) + "_OSL" + label_value(cfg.osl) + "_CONC" +
                                 label_value(cfg.conc) + "_kernel_roofline_simple.csv");
    MAGPIE_RETURN_IF_ERROR(write_file_atomic(simple, roofline_simple_csv(a)));
    r["files"] = fl;
    r["simple_summary_file"] = simple.string();
    r["gpu_timeline"] = a.timeline.to_json();
    r["rules"] = rules_json(cfg.tracelens_compat, a);
    for (const auto& f : fl) files.push_back(f);
    files.push_back(simple.string());
    b["stage_results"][stage] = r;
  }
  return finish();
}

}  // namespace magpie::trace
