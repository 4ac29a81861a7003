#include "sched/job_results.h"

#include "core/state_row_codec.h"
#include "core/states.h"
#include "core/strings.h"

namespace magpie::sched {

std::optional<kernel::external_reference> reference_from_job(const batch& b) {
  const job_record* r = b.find("reference");
  if (!r) return std::nullopt;
  kernel::external_reference ext;
  ext.id = "reference";
  auto res = read_job_result(r->dir);
  json report = res.ok() ? read_job_report(*res) : json(nullptr);
  if (!report.is_object() || !report.contains("reference")) {
    ext.failure = strprintf("the reference job '%s' (%s job %s) wrote no reference report%s", r->name.c_str(), engine_kind_name(r->engine),
                            r->job_id.empty() ? "?" : r->job_id.c_str(),
                            res.ok() ? (": " + json_string(*res, "error")).c_str() : " (killed, cancelled or crashed?)");
    return ext;
  }
  const json& row = report["reference"];
  ext.report = row;
  if (row.contains("extra")) ext.id = json_string(row["extra"], "kernel_id", ext.id);
  ext.basis = row_correctness_basis(row, correctness_basis::reference);
  ext.manifest_dir = json_string(report, "manifest_dir");
  if (!row_correct(row)) {
    bool compile_failed = row_stage_state(row, "compiling_state", stage_state::skipped) == stage_state::failed;
    std::string why = compile_failed ? "compile failed" : "correctness failed";
    const json* errors = json_member(row, "errors");
    if (errors && errors->is_array() && !errors->empty())
      if (auto first = json_as_string(errors->front())) why = *first;
    ext.failure = why;
  }
  return ext;
}

std::vector<kernel_row> correctness_rows(const batch& b, const kernel::eval_request& req) {
  std::vector<kernel_row> rows(req.kernels.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i].index = static_cast<int>(i);
  const bool baseline_is_ref = b.mode == batch_mode::compare && !req.reference;
  if (baseline_is_ref && req.baseline_index >= 0 && static_cast<size_t>(req.baseline_index) < rows.size()) {
    auto& r = rows[static_cast<size_t>(req.baseline_index)];
    r.job = "reference";
    if (const job_record* j = b.find("reference")) {
      auto res = read_job_result(j->dir);
      json rep = res.ok() ? read_job_report(*res) : json(nullptr);
      if (rep.is_object() && rep.contains("reference")) r.row = rep["reference"];
      else r.missing = res.ok() ? "its report is missing" : "it wrote no result";
    }
  }
  for (const auto& j : b.jobs) {
    if (j.role != job_role::kernel || j.kernels.size() != 1) continue;
    size_t i = static_cast<size_t>(j.kernels[0]);
    if (i >= rows.size()) continue;
    rows[i].job = j.name;
    auto res = read_job_result(j.dir);
    json rep = res.ok() ? read_job_report(*res) : json(nullptr);
    if (rep.is_object() && rep.contains("results") && rep["results"].is_array() && !rep["results"].empty())
      rows[i].row = rep["results"][0];
    else
      rows[i].missing = res.ok() ? "its report is missing: " + json_string(*res, "error") : "it wrote no result";
  }
  return rows;
}

}  // namespace magpie::sched
