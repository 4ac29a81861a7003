// run_inference_analysis (api.h): upstream Magpie's `analysis_mode: inference` on the native engine.
#include <algorithm>
#include <memory>

#include "core/strings.h"
#include "trace/api.h"
#include "trace/health.h"
#include "trace/health_printer.h"
#include "trace/report.h"
#include "trace/report_result.h"
#include "trace/stage_codec.h"
#include "trace/xlsx.h"

namespace magpie::trace {
namespace {

status_or<std::vector<inference_stage>> canonical_stages(const std::vector<std::string>& in) {
  std::vector<inference_stage> stages;
  for (const auto& s : in) {
    if (to_lower(s) == "all") return std::vector<inference_stage>(std::begin(k_inference_stages), std::end(k_inference_stages));
    std::optional<inference_stage> c = parse_inference_stage(s);
    if (!c) return invalid_argument("unknown analysis stage '%s' (prefilldecode, decode, prefill, all)", s.c_str());
    if (std::find(stages.begin(), stages.end(), *c) == stages.end()) stages.push_back(*c);
  }
  return stages;
}

}  // namespace

status_or<inference_result> run_inference_analysis(const inference_config& cfg, const fs::path& trace_dir,
                                                   const fs::path& out_dir) {
  inference_result b;
  MAGPIE_ASSIGN_OR_RETURN(b.stages, canonical_stages(cfg.stages));
  MAGPIE_RETURN_IF_ERROR(check_export_format(cfg.export_format));
  b.export_format = cfg.export_format;
  b.trace_dir = trace_dir;
  b.out_dir = out_dir;
  b.tracelens_compat = cfg.tracelens_compat;
  fs::path rank0 = cfg.trace_file.empty() ? find_rank0_trace(trace_dir) : cfg.trace_file;
  if (rank0.empty()) {
    b.errors.push_back("No rank-0 trace found in " + trace_dir.string());
    return b;
  }
  b.rank0_trace = rank0;
  auto loaded = load_trace_model(rank0, model_options_for(cfg.tracelens_compat));
  if (!loaded.ok()) {
    b.errors.push_back(rank0.filename().string() + ": " + loaded.get_status().message());
    return b;
  }
  const trace_model& m = *loaded;
  const input_health& health = b.input.emplace(check_model(m, true));
  for (const auto& p : health.problems)
    (health.usable() ? b.warnings : b.errors).push_back(rank0.filename().string() + ": " + problem_text(p));
  if (!health.usable()) return b;
  MAGPIE_ASSIGN_OR_RETURN(spec_choice sc, choose_gpu_spec(cfg.gpu_spec_file, cfg.gpu_name, m.device_name, cfg.use_achievable));
  if (sc.spec) b.spec = std::make_shared<const gpu::gpu_spec>(std::move(*sc.spec));
  else b.warnings.push_back(sc.how);
  b.analysed = true;
  b.gpu_spec_choice = sc.how;
  b.split = split_steps(m);
  const stage_split& split = b.split;
  for (const auto& n : split.notes) b.warnings.push_back(n);
  MAGPIE_RETURN_IF_ERROR(make_dirs(out_dir / "trace_split"));
  fs::path details = out_dir / "trace_split" / "execution_details.csv";
  MAGPIE_RETURN_IF_ERROR(write_file_atomic(details, execution_details_csv(split)));
  b.output_files.push_back(details.string());
  std::optional<int64_t> conc = parse_int(cfg.conc);
  std::vector<step_span> spans = step_spans(m);
  analysis_options opts{.linked_only_timeline = cfg.tracelens_compat};
  for (const auto& stage : b.stages) {
    stage_result& r = b.stage_results.emplace_back();
    r.stage = stage;
    r.trace_path = rank0;
    r.pick = pick_step(split, stage, conc);
    r.output_dir = out_dir / r.pick.label;
    if (!r.pick.step) {
      r.error = r.pick.selection_reason;
      b.warnings.push_back(std::string(inference_stage_name(stage)) + ": " + r.pick.selection_reason);
      continue;
    }
    r.analysis = analyze(m, split.steps[*r.pick.step].gpu, b.spec.get(), spans, opts);
    MAGPIE_RETURN_IF_ERROR(write_analysis_files(r.output_dir, r.analysis, cfg.export_format == "excel",
                                                r.pick.label + ".xlsx", {}, &r.files));
    r.simple_summary_file = out_dir / (r.pick.label + "_ISL" + label_value(cfg.isl) + "_OSL" + label_value(cfg.osl) +
                                       "_CONC" + label_value(cfg.conc) + "_kernel_roofline_simple.csv");
    MAGPIE_RETURN_IF_ERROR(write_file_atomic(r.simple_summary_file, roofline_simple_csv(r.analysis)));
    b.output_files.insert(b.output_files.end(), r.files.begin(), r.files.end());
    b.output_files.push_back(r.simple_summary_file.string());
  }
  return b;
}

}  // namespace magpie::trace
