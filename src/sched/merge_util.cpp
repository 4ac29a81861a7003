#include "sched/merge_util.h"

#include "core/strings.h"
#include "magpie_generated/version.h"
#include "sched/engine.h"
#include "sched/job_results.h"

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
  std::string s = j->engine + " job " + j->job_id + " (" + j->name + ") ";
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
  json extra = row.value("extra", json::object());
  json r = {{"kernel_id", extra.value("kernel_id", "")},
            {"kernel_type", extra.value("kernel_type", "")},
            {"compiling_state", row.value("compiling_state", "SKIPPED")},
            {"correctness_state", row.value("correctness_state", "FAILED")},
            {"performance_state", row.value("performance_state", "SKIPPED")},
            {"latency_state", "SKIPPED"},
            {"score", row.value("score", 0.0)},
            {"outcome", row.value("outcome", "failed")},
            {"correctness_method", row.value("correctness_method", "none")}};
  const json& t = row.contains("timing") ? row["timing"] : json(nullptr);
  if (t.is_object() && t.value("success", false) && t.contains("stats_ns") && t["stats_ns"].contains("median"))
    r["kernel_time_median_us"] = t["stats_ns"]["median"].get<double>() / 1e3;
  return r;
}

json header(const batch& b, const eval_request& req, const std::string& mode, const std::string& ts,
            const std::map<std::string, job_view>& views) {
  json gpu = nullptr, cupti = nullptr;
  for (const auto& [name, v] : views) {
    if (!v.report.is_object()) continue;
    if (gpu.is_null() && v.report.contains("gpu_arch") && !v.report["gpu_arch"].is_null()) gpu = v.report["gpu_arch"];
    if (name == "timing" && v.report.contains("cupti_injection")) cupti = v.report["cupti_injection"];
  }
  return {{"mode", mode},
          {"timestamp", ts},
          {"magpie_version", std::string(MAGPIE_VERSION) + "+" + MAGPIE_GIT_COMMIT},
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
    seeds = it->second.report.value("seeds", json(nullptr));
    manifest = it->second.report.value("manifest_dir", json(nullptr));
  }
  json problems = json::array();
  for (const auto& [name, v] : views) {
    if (!v.report.is_object()) continue;
    if (v.report.value("run_seed", json(nullptr)) != json(b.run_seed))
      problems.push_back(name + ": run_seed " + v.report.value("run_seed", json(nullptr)).dump() + " is not the batch's");
    if (name != "reference" && v.report.contains("external_reference") && !manifest.is_null() &&
        v.report["external_reference"].value("manifest_dir", json(nullptr)) != manifest)
      problems.push_back(name + ": compared against another reference manifest");
  }
  for (const auto& r : rows) {
    if (!r.row.is_object() || !r.row.contains("correctness")) continue;
    json s = r.row["correctness"].value("seeds", json(nullptr));
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
  row["correctness_state"] = "FAILED";
  if (row.value("outcome", "") == "passed") row["outcome"] = "failed";
  if (!row.contains("errors") || !row["errors"].is_array()) row["errors"] = json::array();
  row["errors"].push_back(why);
}


}  // namespace magpie::sched::merge_detail
