#include "sched/merge_report_writer.h"
#include "kernel/policy_printer.h"

#include "core/state_row_codec.h"
#include "core/states.h"
#include "core/strings.h"
#include "magpie_generated/version.h"
#include "core/workspace.h"
#include "sched/batch_codec.h"
#include "sched/engine.h"
#include "sched/job_results.h"
#include "sched/slurm_codec.h"

namespace magpie::sched::merge_detail {

using kernel::eval_request;

std::map<std::string, job_view> load_views(const batch& b) {
  std::map<std::string, job_view> v;
  for (const auto& j : b.jobs) {
    job_view x;
    x.job = &j;
    if (auto r = read_job_result(j.dir); r.ok()) {
      x.result = *r;
      x.report = read_job_report(*r);
    }
    v[j.name] = x;
  }
  return v;
}

std::string job_end_text(const job_record* j) {
  if (!j) return "no job evaluated it";
  if (j->job_id.empty()) return "its job '" + j->name + "' was not submitted: " + j->submit_error;
  std::string s = std::string(engine_kind_name(j->engine)) + " job " + j->job_id + " (" + j->name + ") ";
  const job_info& l = j->last;
  if (!is_terminal(l.state)) {
    s += std::string("was still ") + job_state_name(l.state) + " when the batch was collected";
  } else {
    s += std::string("ended ") + job_state_name(l.state);
    if (!l.reason.empty()) s += " (" + l.reason + ")";
    if (l.exit_status >= 0) s += strprintf(", exit code %d", l.exit_status);
    if (l.exit_signal > 0) s += strprintf(", signal %d", l.exit_signal);
  }
  return s + "; log: " + job_log_path(*j).string();
}

json job_brief(const job_record* j) {
  if (!j) return nullptr;
  return {{"name", j->name},
          {"job_id", j->job_id.empty() ? json(nullptr) : json(j->job_id)},
          {"state", job_state_name(j->last.state)},
          {"nodes", j->last.nodes.empty() ? json(nullptr) : json(j->last.nodes)},
          {"exit_code", j->last.exit_status >= 0 ? json(j->last.exit_status) : json(nullptr)}};
}

json summary_row_from(const json& row) {
  const json* extra = json_member(row, "extra");
  const json& e = extra ? *extra : row;  // a row without extra has no kernel_id / kernel_type
  auto state = [&](const char* key, stage_state dflt) { return stage_state_name(row_stage_state(row, key, dflt)); };
  json r = {{"kernel_id", extra ? json_string(e, "kernel_id") : ""},
            {"kernel_type", extra ? json_string(e, "kernel_type") : ""},
            {"compiling_state", state("compiling_state", stage_state::skipped)},
            {"correctness_state", state("correctness_state", stage_state::failed)},
            {"performance_state", state("performance_state", stage_state::skipped)},
            {"latency_state", stage_state_name(stage_state::skipped)},
            {"score", json_number(row, "score", 0.0)},
            {"outcome", kernel_outcome_name(row_outcome(row, kernel_outcome::failed))},
            {"correctness_method", row_correctness_basis(row, correctness_basis::none)}};
  if (auto median = timed_median_ns(row)) r["kernel_time_median_us"] = *median / 1e3;
  return r;
}

std::optional<double> timed_median_ns(const json& row) {
  const json* t = json_member(row, "timing");
  if (!t || !json_bool(*t, "success", false)) return std::nullopt;
  const json* stats = json_member(*t, "stats_ns");
  const json* median = stats ? json_member(*stats, "median") : nullptr;
  return median ? json_as_number(*median) : std::nullopt;
}

json header(const batch& b, const eval_request& req, kernel::run_mode mode, const std::string& ts,
            const std::map<std::string, job_view>& views) {
  json gpu = nullptr, cupti = nullptr;
  for (const auto& [name, v] : views) {
    if (!v.report.is_object()) continue;
    if (gpu.is_null() && v.report.contains("gpu_arch") && !v.report["gpu_arch"].is_null()) gpu = v.report["gpu_arch"];
    if (v.job->role == job_role::timing && v.report.contains("cupti_injection")) cupti = v.report["cupti_injection"];
  }
  return {{"mode", mode},
          {"timestamp", ts},
          {"magpie_version", std::string(MAGPIE_VERSION "+" MAGPIE_GIT_COMMIT)},
          {"config_file", req.config_file.empty() ? json(nullptr) : json(req.config_file)},
          {"gpu_arch", gpu},
          {"cupti_injection", cupti},
          {"run_seed", b.run_seed}};
}

// The run seed, trial seeds and reference manifest of every job must be the batch's.
json check_inputs(const batch& b, const std::map<std::string, job_view>& views, const std::vector<kernel_row>& rows,
                  std::vector<bool>* bad) {
  json seeds = nullptr, manifest = nullptr;
  if (auto it = views.find("reference"); it != views.end() && it->second.report.is_object()) {
    seeds = json_value(it->second.report, "seeds");
    manifest = json_value(it->second.report, "manifest_dir");
  }
  json problems = json::array();
  for (const auto& [name, v] : views) {
    if (!v.report.is_object()) continue;
    json run_seed = json_value(v.report, "run_seed");
    if (run_seed != json(b.run_seed))
      problems.push_back(name + ": run_seed " + dump_compact(run_seed) + " is not the batch's");
    if (v.job->role != job_role::reference && json_member(v.report, "external_reference") && !manifest.is_null() &&
        json_value(json_value(v.report, "external_reference"), "manifest_dir") != manifest)
      problems.push_back(name + ": compared against another reference manifest");
  }
  for (const auto& r : rows) {
    json s = json_value(json_value(r.row, "correctness"), "seeds");
    if (s.is_null()) continue;
    if (seeds.is_null()) seeds = s;
    if (s != seeds) {
      problems.push_back(strprintf("kernel %d (%s): trial seeds differ from the reference's", r.index, r.job.c_str()));
      (*bad)[static_cast<size_t>(r.index)] = true;
    }
  }
  return {{"run_seed", b.run_seed}, {"trial_seeds", seeds}, {"reference_manifest", manifest},
          {"identical", problems.empty()}, {"problems", problems},
          {"note", "every job evaluated with the batch's run seed (same trial and timing seeds); candidates are "
                   "compared against the one reference manifest, and the correctness gate also rejects inputs "
                   "that differ from the reference's"}};
}

void force_incorrect(json& row, const std::string& why) {
  row["correctness_state"] = stage_state_name(stage_state::failed);
  if (row_outcome(row, kernel_outcome::failed) == kernel_outcome::passed) row["outcome"] = kernel_outcome_name(kernel_outcome::failed);
  if (!row.contains("errors") || !row["errors"].is_array()) row["errors"] = json::array();
  row["errors"].push_back(why);
}


}  // namespace magpie::sched::merge_detail

namespace magpie::sched {

using kernel::eval_request;
using namespace merge_detail;

json missing_kernel_row(const kernel::kernel_spec& spec, const job_record* job, const std::string& why) {
  std::string msg = why.empty() ? job_end_text(job) : why;
  bool timeout = job && job->last.state == job_state::timeout;
  const char* skipped = stage_state_name(stage_state::skipped);
  return {{"compiling_state", skipped},
          {"correctness_state", stage_state_name(stage_state::failed)},
          {"performance_state", skipped},
          {"latency_state", skipped},
          {"errors", {msg}},
          {"score", 0.0},
          {"compiling_result", nullptr},
          {"correctness_result", {{"success", false}, {"errors", {msg}}}},
          {"performance_result", nullptr},
          {"latency_result", nullptr},
          {"extra", {{"kernel_id", spec.id}, {"kernel_type", kernel::kernel_type_name(spec.type)}}},
          {"outcome", kernel_outcome_name(timeout ? kernel_outcome::timeout : kernel_outcome::failed)},
          {"correctness_method", correctness_basis::none},
          {"correctness", {{"method", correctness_basis::none}, {"failures", {msg}}}},
          {"timing", nullptr},
          {"kernel_config", kernel_spec_json(spec)},
          {"job_state", job ? json(job_state_name(job->last.state)) : json(nullptr)}};
}

json scheduler_section(const batch& b, const eval_request& req) {
  json jobs = json::array();
  std::map<std::string, int> counts;
  bool complete = true;
  for (const auto& j : b.jobs) {
    json ids = json::array();
    for (int k : j.kernels)
      if (k >= 0 && static_cast<size_t>(k) < req.kernels.size()) ids.push_back(req.kernels[static_cast<size_t>(k)].id);
    json res = nullptr;
    if (auto r = read_job_result(j.dir); r.ok())
      res = {{"exit_code", r->value("exit_code", json(nullptr))}, {"error", r->value("error", json(nullptr))},
             {"node", r->value("node", json(nullptr))}, {"workspace", r->value("workspace", json(nullptr))}};
    json row = job_info_json(j.last);
    row["name"] = j.name;
    row["role"] = j.role;
    row["kernels"] = ids;
    row["after"] = j.after;
    row["dir"] = j.dir.string();
    row["log"] = j.job_id.empty() ? json(nullptr) : json(job_log_path(j).string());
    row["result"] = res;
    if (!j.submit_error.empty()) row["submit_error"] = j.submit_error;
    jobs.push_back(row);
    counts[job_state_name(j.last.state)]++;
    complete = complete && is_terminal(j.last.state);
  }
  json s = {{"environment", b.engine}, {"batch", b.dir.filename().string()}, {"batch_dir", b.dir.string()},
          {"submit_host", b.submit_host}, {"created", b.created}, {"collected", iso_time_now()},
          {"complete", complete}, {"job_states", counts}, {"jobs", jobs},
          {"options", batch_options_json(b)}};
  if (b.engine == engine_kind::ray) s["ray_address"] = b.ray_address;
  return s;
}

}  // namespace magpie::sched
