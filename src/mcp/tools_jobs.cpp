// Job tools for Slurm and Ray batches (magpie jobs, src/sched): jobs_list, jobs_status,
// jobs_collect, jobs_cancel, and Magpie's ray_task_list / ray_task_status / ray_task_result /
// ray_task_cancel with its argument names (task_id = a batch name or directory, or a run handle
// "run-<n>" of this server's benchmark / benchmark_batch tools). Batch tools run this binary's
// `magpie jobs ...` as a child and read the JSON it prints or the batch.json it saves.
#include <map>

#include "core/states.h"
#include "core/strings.h"
#include "mcp/run_registry.h"
#include "mcp/run_view_printer.h"
#include "core/json_schema.h"
#include "mcp/tool_schema.h"
#include "mcp/tool_util.h"
#include "sched/report_schema.h"

namespace magpie::mcp {

using namespace magpie::schema;  // the one schema library (core/json_schema.h)
namespace {

/// The arguments of the batch tools (jobs_*, and Magpie's ray_task_* names), decoded once.
struct jobs_args {
  std::string batch;                       ///< batch (Magpie: task_id), or a run handle "run-<n>"
  std::optional<std::string> output_dir;   ///< nullopt: the server default
  std::string shared_dir;                  ///< shared_dir (Magpie: ray_shared_storage_path)
  bool refresh = false, wait = true;
  double timeout_s = 7200;
  std::vector<std::string> jobs;           ///< jobs_cancel: these jobs only
  static jobs_args decode(const json& a) {
    jobs_args r;
    r.batch = arg_str(a, "batch", arg_str(a, "task_id"));
    r.output_dir = json_as_string(json_value(a, "output_dir"));
    r.shared_dir = arg_str(a, "shared_dir", arg_str(a, "ray_shared_storage_path"));
    r.refresh = arg_bool(a, "refresh", false);
    r.wait = arg_bool(a, "wait", true);
    r.timeout_s = arg_num(a, "timeout_seconds", 7200);
    r.jobs = arg_strings(a, "jobs");
    return r;
  }
};

// --output-dir / --shared-dir of the arguments.
std::vector<std::string> where_args(const jobs_args& a, const tool_context& ctx) {
  std::vector<std::string> v = {"-o", a.output_dir ? *a.output_dir : ctx.settings().default_output_dir.string()};
  if (!a.shared_dir.empty()) v.insert(v.end(), {"--shared-dir", a.shared_dir});
  return v;
}

// Runs `magpie jobs <args>`; the JSON it printed, or an error with its stderr.
status_or<json> jobs_json(tool_context& ctx, std::vector<std::string> args, double timeout_s) {
  args.insert(args.begin(), "jobs");
  MAGPIE_ASSIGN_OR_RETURN(cli_run run, run_magpie(ctx, args, timeout_s));
  const run_result& r = run.outcome.result;
  auto j = parse_json(r.out, "magpie jobs output");
  if (!j.ok() || r.exit_code > 1)
    return error(status_code::unavailable, "magpie %s failed: %s", argv_to_display(args).c_str(),
                 std::string(trim(r.output_tail(600))).c_str());
  return *j;
}

// The batch.json the CLI saved (states after a cancel, the collected workspace).
status_or<json> saved_batch(tool_context& ctx, const jobs_args& a) {
  std::vector<std::string> args = {"status", a.batch, "--json"};
  auto w = where_args(a, ctx);
  args.insert(args.end(), w.begin(), w.end());
  MAGPIE_ASSIGN_OR_RETURN(json st, jobs_json(ctx, args, 120));
  return read_json_file(fs::path(json_string(st, "batch")) / "batch.json");
}

tool_result list_tool(const json& arguments, tool_context& ctx) {
  const jobs_args a = jobs_args::decode(arguments);
  std::vector<std::string> args = {"list", "--json"};
  if (a.refresh) args.push_back("--refresh");
  auto w = where_args(a, ctx);
  args.insert(args.end(), w.begin(), w.end());
  auto j = jobs_json(ctx, args, 300);
  if (!j.ok()) return tool_result::error(j.get_status().message());
  json tasks = json::array();  // Magpie's ray_task_list rows; status: sched::batch_status
  for (const auto& b : *j)
    tasks.push_back({{"task_id", json_string(b, "batch")}, {"status", json_string(b, "status", task_status_name(task_status::unknown))},
                     {"engine", json_string(b, "engine")}});
  json out = {{"total", j->size()}, {"batches", *j}, {"tasks", tasks}};
  return tool_result::ok(strprintf("%zu batch(es)", j->size()), out);
}

tool_result status_tool(const json& arguments, tool_context& ctx) {
  const jobs_args a = jobs_args::decode(arguments);
  std::vector<std::string> args = {"status", a.batch, "--json"};
  auto w = where_args(a, ctx);
  args.insert(args.end(), w.begin(), w.end());
  auto j = jobs_json(ctx, args, 120);
  if (!j.ok()) return tool_result::error(j.get_status().message());
  (*j)["task_id"] = a.batch;
  return tool_result::ok(json_string(*j, "status") + ": " + json_string(*j, "batch"), *j);
}

tool_result collect_tool(const json& arguments, tool_context& ctx) {
  const jobs_args a = jobs_args::decode(arguments);
  std::vector<std::string> args = {"collect", a.batch, "--json"};
  if (!a.wait) args.push_back("--no-wait");
  auto w = where_args(a, ctx);
  args.insert(args.end(), w.begin(), w.end());
  auto report = jobs_json(ctx, args, a.timeout_s);
  if (!report.ok()) return tool_result::error(report.get_status().message());
  auto b = saved_batch(ctx, a);
  json collected = b.ok() ? b->value("collected", json(nullptr)) : json(nullptr);
  json out = {{"task_id", a.batch}, {"_task_id", a.batch}, {"report", *report}, {"collected", collected}};
  return tool_result::ok("collected " + a.batch, out);
}

tool_result cancel_tool(const json& arguments, tool_context& ctx) {
  const jobs_args a = jobs_args::decode(arguments);
  std::vector<std::string> args = {"jobs", "cancel", a.batch};
  for (const auto& n : a.jobs) args.push_back(n);
  auto w = where_args(a, ctx);
  args.insert(args.end(), w.begin(), w.end());
  auto run = run_magpie(ctx, args, 300);
  if (!run.ok()) return tool_result::error(run.get_status().message());
  if (run->outcome.result.exit_code != 0)
    return tool_result::error("magpie jobs cancel failed: " + std::string(trim(run->outcome.result.output_tail(600))));
  auto b = saved_batch(ctx, a);
  json jobs = json::array();
  if (b.ok())
    for (const auto& j : b->value("jobs", json::array()))
      jobs.push_back({{"name", json_string(j, "name")}, {"job_id", json_string(j, "job_id")},
                      {"state", j.contains("last") ? json_string(j["last"], "state") : ""}});
  json out = {{"task_id", a.batch}, {"cancelled", true}, {"jobs", jobs},
              {"message", "cancel requested; jobs not yet submitted will not be"}};
  return tool_result::ok("cancelled " + a.batch, out);
}

// ---- run handles ("run-<n>") under Magpie's ray_task_* names ----

bool is_run_handle(const std::string& id) { return starts_with(id, "run-"); }

/// upstream Magpie's status words for a run handle's state.
std::string run_status_word(run_state s) {
  switch (s) {
    case run_state::queued: return task_status_name(task_status::pending);
    case run_state::running: return task_status_name(task_status::running);
    case run_state::succeeded: return task_status_name(task_status::succeeded);
    case run_state::cancelled: return task_status_name(task_status::stopped);
    case run_state::failed:
    case run_state::timed_out: return task_status_name(task_status::failed);
  }
  return task_status_name(task_status::unknown);
}

tool_result ray_list_tool(const json& a, tool_context& ctx) {
  tool_result batches = list_tool(a, ctx);
  if (batches.is_error) return batches;
  json out = batches.structured;
  for (const auto& r : ctx.runs().list())
    out["tasks"].push_back({{"task_id", r.run_id}, {"status", run_status_word(r.state)},
                            {"engine", "local"}});
  out["total"] = out["tasks"].size();
  return tool_result::ok(strprintf("%zu task(s)", out["tasks"].size()), out);
}

tool_result ray_status_tool(const json& a, tool_context& ctx) {
  std::string id = jobs_args::decode(a).batch;
  if (!is_run_handle(id)) return status_tool(a, ctx);
  auto s = ctx.runs().status(id, 20);
  if (!s) return tool_result::error("unknown task_id '" + id + "'");
  std::string st = run_status_word(s->state);
  return tool_result::ok(id + ": " + st, {{"task_id", id}, {"status", st}, {"engine", "local"}, {"run", run_view_json(*s)}});
}

tool_result ray_result_tool(const json& a, tool_context& ctx) {
  std::string id = jobs_args::decode(a).batch;
  if (!is_run_handle(id)) return collect_tool(a, ctx);
  auto s = ctx.runs().status(id, 0);
  if (!s) return tool_result::error("unknown task_id '" + id + "'");
  if (is_active(s->state)) return tool_result::error(id + " has not finished (" + run_state_name(s->state) + ")");
  json out = s->result.is_object() ? s->result : json::object();  // Magpie: result + _task_id
  out["task_id"] = id;
  out["_task_id"] = id;
  out["status"] = run_status_word(s->state);
  if (!s->error.empty()) out["error"] = s->error;
  return tool_result::ok(id + ": " + run_status_word(s->state), out);
}

tool_result ray_cancel_tool(const json& a, tool_context& ctx) {
  std::string id = jobs_args::decode(a).batch;
  if (!is_run_handle(id)) return cancel_tool(a, ctx);
  if (!ctx.runs().status(id, 0)) return tool_result::error("unknown task_id '" + id + "'");
  bool ok = ctx.runs().cancel(id);
  return tool_result::ok(id + (ok ? ": cancellation requested" : ": not running"),
                         {{"task_id", id}, {"cancelled", ok}, {"jobs", json::array()},
                          {"message", ok ? "cancellation requested" : "the run has already ended"}});
}

// ---- output schemas (one per tool) ----


json task_row_schema() {
  return s_object({{"task_id", s_string("batch name or run handle")},
                   {"status", s_enum("Magpie's words", task_status_names({task_status::pending, task_status::running,
                                                                             task_status::succeeded, task_status::failed,
                                                                             task_status::stopped, task_status::unknown}))},
                   {"engine", s_string("slurm | ray | local (a run handle of this server)")}},
                  {"task_id", "status"});
}

json list_output_schema() {
  return s_object({{"total", s_integer("tasks listed", 0)},
                   {"batches", s_array(sched::batch_list_row_schema(), "magpie jobs list --json rows")},
                   {"tasks", s_array(task_row_schema(), "Magpie's task view")}},
                  {"total", "batches", "tasks"});
}

/// A batch's `magpie jobs status --json` (sched::batch_status_json) plus task_id, or a run
/// handle's {task_id, status, engine: local, run}.
json status_output_schema() {
  const json batch = sched::batch_status_schema()["properties"];
  return s_object({{"task_id", s_string("as given")}, {"status", task_row_schema()["properties"]["status"]},
                   {"batch", batch["batch"]}, {"engine", s_string("slurm | ray | local (a run handle of this server)")},
                   {"mode", batch["mode"]}, {"jobs", batch["jobs"]}, {"run", run_status_schema()}},
                  {"task_id", "status"});
}

/// A batch's merged report (magpie jobs collect --json) and its collected record, or a run
/// handle's result keys (run_status_schema's result) with Magpie's _task_id.
json collect_output_schema() {
  json props = {{"task_id", s_string("as given")}, {"_task_id", s_string("Magpie's key")},
                {"report", sched::merged_report_schema("any")}, {"collected", sched::collected_schema()},
                {"status", s_string("a run handle's Magpie status word")}, {"error", s_string("why a run failed")}};
  const json result = run_status_schema()["properties"]["result"]["properties"];
  for (auto it = result.begin(); it != result.end(); ++it)
    if (!props.contains(it.key())) props[it.key()] = it.value();
  json s = {{"type", "object"}, {"properties", props}, {"required", {"task_id", "_task_id"}}, {"additionalProperties", false}};
  s["description"] = "a batch's merged report, or a run handle's result keys (Magpie's BenchmarkResult) plus _task_id";
  return s;
}

json cancel_output_schema() {
  json job = s_object({{"name", s_string("job")}, {"job_id", s_string("scheduler id")}, {"state", s_string("state")}},
                      {"name", "job_id", "state"});
  return s_object({{"task_id", s_string("as given")}, {"cancelled", s_boolean("requested")},
                   {"jobs", s_array(job, "job states after the request")}, {"message", s_string("what happened")}},
                  {"task_id", "cancelled", "jobs", "message"});
}

json where_props(json props, bool magpie_names) {
  props["output_dir"] = with_default(s_string("results directory of the submitting side"), "./results");
  if (magpie_names) {
    props["ray_shared_storage_path"] = s_string("shared directory holding the batches (default <output_dir>/batches)");
    props["ray_cluster_address"] = s_string("accepted for Magpie compatibility: each batch records its cluster address");
  } else {
    props["shared_dir"] = s_string("shared directory holding the batches (default <output_dir>/batches)");
  }
  return props;
}

// A tool whose input schema is `props` (closed) and whose result is an object.
tool_def def(const char* name, const char* title, const char* what, json props, std::vector<std::string> req,
             bool read_only, tool_handler h, json output) {
  json in = {{"type", "object"}, {"properties", std::move(props)}, {"additionalProperties", false}};
  if (!req.empty()) in["required"] = std::move(req);
  return {name, title, what, std::move(in), std::move(output), read_only, std::move(h)};
}

}  // namespace

void add_jobs_tools(std::vector<tool_def>* out) {
  const json batch = s_string("batch directory, or its name under the shared directory");
  out->push_back(def("jobs_list", "List scheduler batches",
                     "Slurm and Ray batches under the shared directory with their engine, mode and job states.",
                     where_props({{"refresh", with_default(s_boolean("ask Slurm / Ray first"), false)}}, false), {}, true,
                     list_tool, list_output_schema()));
  out->push_back(def("jobs_status", "Batch job states",
                     "Ask the batch's engine (squeue/sacct or the Ray Jobs API) for its jobs' states; Ray jobs waiting "
                     "for others are submitted once those have ended.",
                     where_props({{"batch", batch}}, false), {"batch"}, false, status_tool, status_output_schema()));
  out->push_back(def("jobs_collect", "Collect a batch",
                     "Wait for a batch, merge its jobs into one analyze/compare report (or gather a command job's "
                     "workspaces) and register it in the results store.",
                     where_props({{"batch", batch},
                                  {"wait", with_default(s_boolean("wait for unfinished jobs"), true)},
                                  {"timeout_seconds", with_default(s_number("give up after", 1), 7200)}},
                                 false),
                     {"batch"}, false, collect_tool, collect_output_schema()));
  out->push_back(def("jobs_cancel", "Cancel batch jobs",
                     "Cancel a batch's unfinished jobs (scancel / Ray stop), or only the named ones.",
                     where_props({{"batch", batch}, {"jobs", s_array(s_string("job name or id"), "only these")}}, false),
                     {"batch"}, false, cancel_tool, cancel_output_schema()));
  const json task = s_string("the batch (Magpie's task id): directory or name under the shared directory, or a run "
                              "handle run-<n> of this server (benchmark, benchmark_batch)");
  out->push_back(def("ray_task_list", "List Ray/Slurm tasks (Magpie name)",
                     "Magpie's ray_task_list: {total, tasks[{task_id, status}]}: batches and this server's run handles.",
                     where_props({}, true), {}, true, ray_list_tool, list_output_schema()));
  out->push_back(def("ray_task_status", "Task status (Magpie name)",
                     "Magpie's ray_task_status: RUNNING | SUCCEEDED | FAILED | UNKNOWN, with every job's state.",
                     where_props({{"task_id", task}}, true), {"task_id"}, false, ray_status_tool, status_output_schema()));
  out->push_back(def("ray_task_result", "Task result (Magpie name)",
                     "Magpie's ray_task_result: waits for the batch and returns its merged report (_task_id added); for "
                     "a finished run handle, its result keys with _task_id.",
                     where_props({{"task_id", task}}, true), {"task_id"}, false, ray_result_tool, collect_output_schema()));
  out->push_back(def("ray_task_cancel", "Cancel a task (Magpie name)", "Magpie's ray_task_cancel: {task_id, cancelled, message}.",
                     where_props({{"task_id", task}}, true), {"task_id"}, false, ray_cancel_tool, cancel_output_schema()));
}

}  // namespace magpie::mcp
