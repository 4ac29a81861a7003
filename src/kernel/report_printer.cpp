#include "kernel/report_printer.h"

#include "core/stats.h"
#include "core/strings.h"
#include "kernel/compare_printer.h"
#include "magpie_generated/version.h"
#include "kernel/integrity_printer.h"
#include "kernel/policy_printer.h"
#include "kernel/stage_printer.h"
#include "kernel/timing_printer.h"

namespace magpie::kernel {

json kernel_eval_json(const kernel_eval& k, const eval_context& ctx) {
  json j;
  j["compiling_state"] = k.compiling.state;
  j["correctness_state"] = k.correctness.state;
  j["performance_state"] = k.performance.state;
  j["latency_state"] = stage_state::skipped;
  std::vector<std::string> errors;
  for (const auto* st : {&k.compiling, &k.correctness, &k.performance})
    if (st->state == stage_state::failed) errors.insert(errors.end(), st->errors.begin(), st->errors.end());
  j["errors"] = errors;
  j["score"] = k.score;
  j["compiling_result"] = stage_result_json(k.compiling);
  j["correctness_result"] = k.correctness.state == stage_state::skipped && k.correctness.errors.empty()
                                ? json(nullptr)
                                : json{{"success", k.correctness.success()},
                                       {"errors", k.correctness.errors.empty() ? json(nullptr) : json(k.correctness.errors)}};
  json perf = stage_result_json(k.performance);
  if (perf.is_object() && !perf.contains("command")) perf["command"] = nullptr;
  j["performance_result"] = perf;
  j["latency_result"] = nullptr;
  j["extra"] = {{"kernel_id", k.spec.id}, {"kernel_type", kernel_type_name(k.spec.type)}};
  j["outcome"] = k.outcome();
  j["correctness_method"] = k.basis;
  json c = k.correctness_info;
  c["method"] = k.basis;
  c["policy"] = correctness_policy_json(ctx.req.correctness);
  if (k.verdict) c["comparison"] = correctness_verdict_json(*k.verdict);
  if (!k.correctness.errors.empty()) c["failures"] = k.correctness.errors;
  j["correctness"] = c;
  j["timing"] = k.timing ? timing_result_json(*k.timing, ctx.req.timing) : json(nullptr);
  j["integrity"] = integrity_report_json(k.integrity);
  j["kernel_config"] = kernel_spec_json(k.spec);
  return j;
}

std::string kernel_eval_text(const kernel_eval& k) {
  std::string sep(60, '=');
  std::string out = sep + "\n";
  out += "Kernel: " + k.spec.id + "\n";
  out += std::string("Type: ") + kernel_type_name(k.spec.type) + "\n";
  out += std::string("Compiling: ") + stage_state_name(k.compiling.state) + "\n";
  out += std::string("Correctness: ") + stage_state_name(k.correctness.state) + " (" + correctness_basis_name(k.basis) + ")\n";
  out += std::string("Performance: ") + stage_state_name(k.performance.state);
  if (k.timing && k.timing->ok)
    out += strprintf(" (median %s, IQR %s, %zu samples, %s, %s)", format_duration_ns(k.timing->stats.median).c_str(),
                     format_duration_ns(k.timing->stats.iqr).c_str(), k.timing->stats.n, timing_source_name(k.timing->source),
                     k.timing->stop_reason.c_str());
  else if (k.performance.state != stage_state::success && !k.performance.errors.empty())
    out += " (" + k.performance.errors.front() + ")";  // why nothing was timed (no GPU, no profiler...)
  out += "\n";
  if (k.integrity.rejected()) out += "Integrity: REJECTED — " + k.integrity.reason() + "\n";
  else if (!k.integrity.checks.empty()) out += "Integrity: ok (" + k.integrity.summary() + ")\n";
  out += strprintf("Score: %.2f\n", k.score);
  std::vector<std::string> errs;
  for (const auto* st : {&k.compiling, &k.correctness, &k.performance})
    if (st->state == stage_state::failed) errs.insert(errs.end(), st->errors.begin(), st->errors.end());
  if (!errs.empty()) {
    out += "Errors:\n";
    for (size_t i = 0; i < errs.size() && i < 8; ++i) out += "  - " + errs[i] + "\n";
    if (errs.size() > 8) out += strprintf("  ... and %zu more (see the report)\n", errs.size() - 8);
  }
  out += sep + "\n";
  return out;
}

json report_header(const eval_context& ctx) {
  return {{"mode", ctx.req.mode},
          {"timestamp", ctx.ws.timestamp},
          {"magpie_version", strprintf("%s+%s", MAGPIE_VERSION, MAGPIE_GIT_COMMIT)},
          {"config_file", ctx.req.config_file.empty() ? json(nullptr) : json(ctx.req.config_file)},
          {"gpu_arch", ctx.gpu_arch.empty() ? json(nullptr) : json(ctx.gpu_arch)},
          {"cupti_injection", ctx.cupti.injection_lib.empty() ? json(nullptr) : json(ctx.cupti.injection_lib.string())},
          {"run_seed", ctx.run_seed}};
}

json summary_row(const kernel_eval& k) {
  json r = {{"kernel_id", k.spec.id},
            {"kernel_type", kernel_type_name(k.spec.type)},
            {"compiling_state", k.compiling.state},
            {"correctness_state", k.correctness.state},
            {"performance_state", k.performance.state},
            {"latency_state", stage_state::skipped},
            {"score", k.score},
            {"outcome", k.outcome()},
            {"correctness_method", k.basis}};
  if (k.timing && k.timing->ok)
    r["kernel_time_median_us"] = k.timing->stats.median / 1e3;
  return r;
}

json reference_json(const kernel_eval& ref, const eval_context& ctx) {
  const auto& ext = ctx.req.external_ref;
  if (!ext) return kernel_eval_json(ref, ctx);
  return ext->report.is_null() ? kernel_eval_json(ref, ctx) : ext->report;
}

json external_reference_json(const external_reference& ext) {
  return {{"id", ext.id}, {"manifest_dir", ext.manifest_dir.empty() ? json(nullptr) : json(ext.manifest_dir.string())},
          {"correctness_method", ext.basis},
          {"failure", ext.failure.empty() ? json(nullptr) : json(ext.failure)}};
}

json compare_report_json(const eval_context& ctx, const compare_run& run) {
  const eval_request& req = ctx.req;
  json report = report_header(ctx);
  report["summary"] = json::array();
  json results;
  results["kernel_results"] = json::array();
  for (const auto& k : *run.kernels) {
    report["summary"].push_back(summary_row(k));
    results["kernel_results"].push_back(kernel_eval_json(k, ctx));
  }
  write_compare_result(run.result, req.compare.confidence, results);
  results["reference"] = run.reference->spec.id;
  results["compare_policy"] = compare_policy_json(req.compare);
  results["timing_policy"] = timing_policy_json(req.timing);
  results["timing_order"] = ctx.timing_order ? timing_order_json(*ctx.timing_order) : json(nullptr);
  results["workers"] = worker_plan_json(ctx.workers);
  results["summary"] = run.result.summary();
  const compare_phases& ph = run.phases;
  results["phases"] = {{"compile_s", ph.compile_s},
                       {"correctness_s", ph.correctness_s},
                       {"timing_s", ph.timing_s},
                       {"other_s", ph.other_s},
                       {"total_s", ph.total_s}};
  report["results"] = results;
  if (run.separate_reference) report["reference"] = reference_json(*run.reference, ctx);
  if (req.external_ref) report["external_reference"] = external_reference_json(*req.external_ref);
  return report;
}

std::string compare_console(const compare_result& cr, const fs::path& workspace) {
  const std::string sep(60, '=');
  std::string out = sep;
  out += "\nCOMPARISON RESULTS\n";
  out += sep;
  out += "\n";
  out += cr.summary();
  out += "\nWorkspace: ";
  out += workspace.string();
  out += "\n";
  return out;
}

}  // namespace magpie::kernel
