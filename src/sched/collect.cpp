#include "sched/collect.h"

#include "core/log.h"
#include "core/strings.h"
#include "core/workspace.h"
#include "core/yaml.h"
#include "kernel/config_snapshot_printer.h"
#include "sched/batch_codec.h"
#include "sched/engine.h"
#include "sched/job_results.h"
#include "sched/merge.h"
#include "sched/task_codec.h"
#include "store/results_store.h"

namespace magpie::sched {

namespace {

void copy_if_exists(const fs::path& from, const fs::path& to_dir) {
  std::error_code ec;
  if (from.empty() || !fs::is_regular_file(from, ec)) return;
  fs::copy_file(from, to_dir / from.filename(), fs::copy_options::overwrite_existing, ec);
  if (ec) MAGPIE_LOG_WARN("could not copy %s: %s", from.c_str(), ec.message().c_str());
}

// Small files of every job: task, script, result, the job's report and its Slurm log.
status copy_job_files(const batch& b, const fs::path& ws) {
  for (const auto& j : b.jobs) {
    fs::path dst = ws / "jobs" / j.name;
    MAGPIE_RETURN_IF_ERROR(make_dirs(dst));
    for (const char* f : {"task.json", "job.sh", "result.json"}) copy_if_exists(j.dir / f, dst);
    if (!j.job_id.empty()) copy_if_exists(job_log_path(j), dst);
    if (auto r = read_job_result(j.dir); r.ok()) copy_if_exists(json_string(*r, "report_file"), dst);
  }
  return ok_status();
}

json config_snapshot(const batch& b, const kernel::eval_request& req) {
  json snap = kernel::config_snapshot(req, b.mode == batch_mode::compare, b.run_seed);
  snap["scheduler"] = batch_options_json(b);
  if (!snap["scheduler"].is_object()) snap["scheduler"] = json::object();
  snap["scheduler"]["environment"] = b.engine;
  snap["scheduler"]["batch_dir"] = b.dir.string();
  return snap;
}

void register_ws(const fs::path& db, const fs::path& ws, collect_outcome* out, bool merged) {
  auto id = store::register_workspace(db, ws);
  if (!id.ok()) {
    MAGPIE_LOG_WARN("results store: %s", id.get_status().message().c_str());
    out->console += "Results store: not registered (" + id.get_status().message() + ")\n";
    return;
  }
  out->registered.push_back(ws);
  if (merged) out->run_id = *id;
  out->console += strprintf("Results store: run %lld in %s\n", static_cast<long long>(*id), db.c_str());
}

status_or<collect_outcome> collect_command(batch& b, const collect_options& o) {
  collect_outcome out;
  out.console = engine_title(b) + " jobs (batch " + b.dir.string() + "):\n" + jobs_table(b);
  fs::path db = o.db_path.empty() ? store::default_db_path(b.output_dir) : o.db_path;
  json found = json::array();
  for (const auto& j : b.jobs) {
    auto r = read_job_result(j.dir);
    if (r.ok()) out.exit_code = r->value("exit_code", 1);
    else out.exit_code = 1;
    fs::path root = r.ok() ? fs::path(json_string(*r, "workspace")) : fs::path();
    std::error_code ec;
    if (root.empty() || !fs::is_directory(root, ec)) continue;
    for (const auto& e : fs::directory_iterator(root, ec)) {
      bool has_report = false;
      for (const char* f : {"analyze_report.json", "compare_report.json", "benchmark_report.json"})
        has_report = has_report || fs::exists(e.path() / f);
      if (!e.is_directory() || !has_report) continue;
      found.push_back(e.path().string());
      out.console += "Workspace: " + e.path().string() + "\n";
      if (o.register_in_store) register_ws(db, e.path(), &out, false);
    }
  }
  b.collected = {{"workspaces", found}, {"at", iso_time_now()}};
  MAGPIE_RETURN_IF_ERROR(b.save());
  return out;
}

}  // namespace

status_or<collect_outcome> collect_batch(batch& b, const collect_options& o) {
  if (b.mode == batch_mode::command) return collect_command(b, o);
  MAGPIE_ASSIGN_OR_RETURN(kernel::eval_request req, load_batch_request(b));
  std::string label = b.mode == batch_mode::analyze && !req.kernels.empty() ? req.kernels[0].id : "";
  MAGPIE_ASSIGN_OR_RETURN(workspace ws, create_workspace(b.output_dir, batch_mode_name(b.mode), label));
  merged_report m = b.mode == batch_mode::compare ? merge_compare(b, req, ws.timestamp) : merge_analyze(b, req, ws.timestamp);
  collect_outcome out;
  out.workspace = ws.dir;
  out.report_path = ws.dir / (std::string(batch_mode_name(b.mode)) + "_report.json");
  out.report = m.report;
  out.exit_code = m.exit_code;
  MAGPIE_RETURN_IF_ERROR(kernel::write_config_snapshot(ws.dir, config_snapshot(b, req)));
  MAGPIE_RETURN_IF_ERROR(copy_job_files(b, ws.dir));
  MAGPIE_RETURN_IF_ERROR(write_json_file(out.report_path, m.report));
  out.console = m.console;
  fs::path db = o.db_path.empty() ? store::default_db_path(b.output_dir) : o.db_path;
  if (o.register_in_store) register_ws(db, ws.dir, &out, true);
  out.console += "Workspace: " + ws.dir.string() + "\n";
  b.collected = {{"workspace", ws.dir.string()}, {"report", out.report_path.string()},
                 {"run_id", out.run_id >= 0 ? json(out.run_id) : json(nullptr)}, {"db", db.string()}, {"at", iso_time_now()}};
  MAGPIE_RETURN_IF_ERROR(b.save());
  copy_if_exists(b.dir / "batch.json", ws.dir);
  return out;
}

}  // namespace magpie::sched
