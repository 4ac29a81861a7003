// Schemas of sched's JSON (see report_schema.h) and the two `magpie jobs` objects built here.
#include "sched/report_schema.h"

#include <map>

#include "core/json_schema.h"
#include "core/states.h"
#include "kernel/eval_schema.h"
#include "sched/job_state.h"
#include "sched/merge.h"
#include "sched/slurm_codec.h"

namespace magpie::sched {

namespace {

using namespace schema;

json nullable(json s) {
  json t = s["type"];
  s["type"] = json::array({t, "null"});
  return s;
}

/// merge_report_writer.cpp job_brief: a job's name, id, state, nodes and exit code (null: no job).
json job_brief_schema() {
  return nullable(closed({{"name", typed("string", "job name")}, {"job_id", typed_or_null("string", "scheduler id")},
                          {"state", words("job state", job_state_names())}, {"nodes", typed_or_null("string", "node list")},
                          {"exit_code", typed_or_null("integer", "exit status")}}));
}

json scheduler_section_schema() {
  json result = nullable(closed({{"exit_code", typed_or_null("integer", "the job's magpie exit code")},
                                 {"error", typed_or_null("string", "why it failed")},
                                 {"node", typed_or_null("string", "node it ran on")},
                                 {"workspace", typed_or_null("string", "its workspace")}}));
  json job = job_info_schema();
  json& p = job["properties"];
  p["name"] = typed("string", "job name");
  p["role"] = words("job role", {"reference", "kernel", "timing", "command"});
  p["kernels"] = list_of(typed("string", "kernel id"), "kernels it evaluated");
  p["after"] = list_of(typed("string", "job name"), "jobs it started after");
  p["dir"] = typed("string", "job directory");
  p["log"] = typed_or_null("string", "its log file");
  p["result"] = result;
  p["submit_error"] = typed("string", "why sbatch / the Ray submission failed");
  job["required"] = {"name", "role", "state"};
  json inputs = closed({{"run_seed", typed("integer", "the batch's run seed")},
                        {"trial_seeds", typed_or_null("array", "the reference's trial seeds")},
                        {"reference_manifest", typed_or_null("string", "the reference's manifest directory")},
                        {"identical", typed("boolean", "every job used the batch's inputs")},
                        {"problems", list_of(typed("string", "problem"), "differences found")},
                        {"note", typed("string", "what was checked")}});
  inputs["properties"]["trial_seeds"]["items"] = typed("integer", "seed");
  json timing = closed({{"interleaved", typed("boolean", "timed side by side in one job")},
                        {"note", typed("string", "how the kernels were timed")},
                        {"job", job_brief_schema()},
                        {"node", typed("string", "node of the timing job")},
                        {"timed_indices", list_of(typed("integer", "kernel index"), "baseline first")}},
                       {"interleaved", "note"});
  json options = nullable(scheduler_options_schema());
  return closed({{"environment", typed("string", "slurm | ray")},
                 {"batch", typed("string", "batch name")},
                 {"batch_dir", typed("string", "batch directory")},
                 {"submit_host", typed("string", "host that submitted it")},
                 {"created", typed("string", "ISO-8601 UTC")},
                 {"collected", typed("string", "ISO-8601 UTC")},
                 {"complete", typed("boolean", "every job ended")},
                 {"job_states", {{"type", "object"}, {"additionalProperties", typed("integer", "jobs")},
                                 {"description", "job state -> count"}}},
                 {"jobs", list_of(job, "every job")},
                 {"options", options},
                 {"ray_address", typed("string", "the Ray dashboard")},
                 {"inputs", inputs},
                 {"timing", timing},
                 {"timing_interleaved", typed("boolean", "as timing.interleaved")}},
                {"environment", "batch", "jobs", "inputs", "timing"});
}

/// A results row of a merged report: a job's report entry (kernel_eval_json) with the job that
/// made it; a kernel whose job wrote nothing gets a shorter row with job_state.
json merged_row_schema() {
  json row = kernel::kernel_eval_schema();
  json& p = row["properties"];
  p["job"] = job_brief_schema();
  p["jobs"] = closed({{"correctness", job_brief_schema()}, {"timing", job_brief_schema()}}, {"correctness"});
  p["job_state"] = typed_or_null("string", "state of the job that should have written the entry");
  p["scheduler_note"] = typed("string", "why the merge changed the entry");
  p["correctness"]["required"] = {"method"};  // a missing row has only method and failures
  row["required"] = {"compiling_state", "correctness_state", "performance_state", "errors", "score", "outcome"};
  return row;
}

}  // namespace

json job_info_schema() {
  return closed({{"job_id", typed("string", "Slurm id or Ray submission id")},
                 {"name", typed("string", "job name")},
                 {"state", words("job state", job_state_names())},
                 {"state_text", typed("string", "as the scheduler printed it")},
                 {"reason", typed_or_null("string", "pending/failure reason")},
                 {"nodes", typed_or_null("string", "node list")},
                 {"exit_code", typed_or_null("integer", "exit status")},
                 {"exit_signal", typed_or_null("integer", "signal that ended it")},
                 {"elapsed_s", typed_or_null("number", "run time, s")},
                 {"start", typed_or_null("string", "start time")},
                 {"end", typed_or_null("string", "end time")},
                 {"time_limit", typed("string", "as printed")},
                 {"source", typed("string", "squeue | sacct | ray")}},
                {"job_id", "name", "state"});
}

json job_row_schema() {
  json s = job_info_schema();
  s["properties"]["name"] = typed("string", "job name");
  s["properties"]["role"] = words("job role", {"reference", "kernel", "timing", "command"});
  s["required"] = {"name", "role", "state"};
  return s;
}

json scheduler_options_schema() {
  json str_map = {{"type", "object"}, {"additionalProperties", typed("string", "value")}, {"description", "name -> value"}};
  json runtime_env = {{"type", {"object", "null"}},
                      {"additionalProperties", {{"type", {"string", "number", "integer", "boolean", "null", "array", "object"}},
                                                {"items", {{"type", {"string", "number", "integer", "boolean"}}}},
                                                {"additionalProperties", {{"type", {"string", "number", "integer", "boolean"}}}}}},
                      {"description", "other runtime_env keys, passed to Ray verbatim (pip lists, env maps, paths)"}};
  json ray = closed({{"cluster_address", typed("string", "dashboard URL or auto")},
                     {"entrypoint_num_cpus", typed_or_null("number", "CPUs per job")},
                     {"entrypoint_num_gpus", typed_or_null("number", "GPUs per job")},
                     {"env_vars", str_map},
                     {"runtime_env", runtime_env},
                     {"metadata", str_map}});
  json p = {{"environment", typed("string", "local | container | ray | slurm")},
            {"max_workers", typed("integer", "workers")},
            {"docker_image", typed_or_null("string", "image")},
            {"gpu_devices", list_of(typed("integer", "device"), "GPU indices")},
            {"cpus_per_task", typed("integer", "sbatch --cpus-per-task")},
            {"sbatch_args", list_of(typed("string", "argument"), "extra sbatch arguments")},
            {"setup", list_of(typed("string", "shell line"), "lines run before magpie")},
            {"poll_seconds", typed("number", "polling interval, s")},
            {"wait", typed("boolean", "wait for the jobs")},
            {"ray_config", ray}};
  for (const char* k : {"partition", "account", "qos", "constraint", "gres", "time_limit", "timing_time_limit", "mem",
                        "shared_dir", "magpie_bin"})
    p[k] = typed("string", k);
  return closed(p);
}

json collected_schema() {
  return nullable(closed({{"workspace", typed("string", "merged workspace")},
                          {"report", typed("string", "merged report file")},
                          {"run_id", typed_or_null("integer", "results-store run id")},
                          {"db", typed("string", "results store")},
                          {"workspaces", list_of(typed("string", "workspace"), "command batches: the jobs' workspaces")},
                          {"at", typed("string", "ISO-8601 UTC")}},
                         {"at"}));
}

json batch_list_row(const batch& b) {
  std::map<std::string, int> states;
  for (const auto& j : b.jobs) states[job_state_name(j.last.state)]++;
  return {{"batch", b.dir.filename().string()}, {"dir", b.dir.string()}, {"engine", b.engine}, {"mode", b.mode},
          {"status", task_status_name(batch_status(b))}, {"created", b.created},
          {"jobs", b.jobs.size()}, {"states", states}, {"collected", b.collected}};
}

json batch_list_row_schema() {
  return closed({{"batch", typed("string", "batch name")}, {"dir", typed("string", "batch directory")},
                 {"engine", typed("string", "slurm | ray")}, {"mode", words("what it runs", {"analyze", "compare", "command"})},
                 {"status", words("Magpie's task status", task_status_names({task_status::running, task_status::succeeded,
                                                                             task_status::failed}))},
                 {"created", typed("string", "ISO-8601 UTC")}, {"jobs", typed("integer", "jobs")},
                 {"states", {{"type", "object"}, {"additionalProperties", typed("integer", "jobs")},
                             {"description", "job state -> count"}}},
                 {"collected", collected_schema()}});
}

json batch_status_json(const batch& b) {
  json js = json::array();
  for (const auto& j : b.jobs) {
    json row = job_info_json(j.last);
    row["name"] = j.name;
    row["role"] = j.role;
    js.push_back(row);
  }
  return {{"batch", b.dir.string()}, {"engine", b.engine}, {"mode", b.mode},
          {"status", task_status_name(batch_status(b))}, {"jobs", js}};
}

json batch_status_schema() {
  json s = batch_list_row_schema();
  json p = {{"batch", typed("string", "batch directory")}, {"engine", s["properties"]["engine"]},
            {"mode", s["properties"]["mode"]}, {"status", s["properties"]["status"]},
            {"jobs", list_of(job_row_schema(), "every job")}};
  return closed(p);
}

json merged_report_schema(const std::string& mode) {
  json r = kernel::kernel_report_schema(mode, scheduler_section_schema());
  json row = merged_row_schema();
  json& results = r["properties"]["results"];
  if (results.contains("items")) results["items"] = row;
  if (results.contains("properties")) results["properties"]["kernel_results"]["items"] = row;
  json ref = row;
  ref["properties"]["error"] = typed("string", "why the reference job wrote no report");
  ref["type"] = {"object", "null"};
  ref.erase("required");
  r["properties"]["reference"] = ref;
  r["required"] = json::array();  // a command batch prints {}
  return r;
}

}  // namespace magpie::sched
