// Distributed jobs for agents: jobs_list / jobs_status / jobs_collect / jobs_cancel (magpie's
// `magpie jobs` batches, run as a CLI child so every engine `magpie jobs` has plugs in), and
// Magpie's ray_task_list / ray_task_status / ray_task_result / ray_task_cancel, which take a
// task_id that is either a run handle of this server ("run-<n>", benchmark / benchmark_batch)
// or a batch of `magpie jobs`.
#include "core/strings.h"
#include "mcp/run_registry.h"
#include "mcp/schema.h"
#include "mcp/tool_util.h"

namespace magpie::mcp {
namespace {

json closed(json props, std::vector<std::string> required) {
  json j = {{"type", "object"}, {"properties", std::move(props)}, {"additionalProperties", false}};
  if (!required.empty()) j["required"] = std::move(required);
  return j;
}

/// Global `magpie jobs` location flags from the tool arguments.
std::vector<std::string> where_flags(const json& a, const tool_context& ctx) {
  std::vector<std::string> f;
  if (!arg_str(a, "shared_dir").empty()) f.insert(f.end(), {"--shared-dir", arg_str(a, "shared_dir")});
  f.insert(f.end(), {"--output-dir", arg_str(a, "output_dir", ctx.settings().default_output_dir.string())});
  return f;
}

/// Runs `magpie jobs <args>`; the parsed JSON stdout, or an error with the CLI's message.
status_or<json> jobs_cli(tool_context& ctx, std::vector<std::string> args, bool want_json, std::string* text = nullptr) {
  args.insert(args.begin(), "jobs");
  MAGPIE_ASSIGN_OR_RETURN(cli_run run, run_magpie(ctx, args, 600));
  const run_result& r = run.outcome.result;
  if (!r.success())
    return error(status_code::failed_precondition, "magpie %s failed (%s): %s", argv_to_display(args).c_str(),
                 r.describe().c_str(), std::string(trim(r.output_tail(1500))).c_str());
  if (text) *text = r.out;
  if (!want_json) return json(nullptr);
  return parse_json(r.out);
}

bool is_run_handle(const std::string& id) { return starts_with(id, "run-"); }

/// Magpie's RUNNING | SUCCEEDED | FAILED | UNKNOWN from a run's state.
std::string magpie_state(const std::string& s) {
  if (s == "running" || s == "queued") return s == "queued" ? "PENDING" : "RUNNING";
  if (s == "succeeded") return "SUCCEEDED";
  if (s == "failed" || s == "cancelled" || s == "timed_out") return s == "cancelled" ? "STOPPED" : "FAILED";
  return "UNKNOWN";
}

tool_result jobs_list_tool(const json& a, tool_context& ctx) {
  std::vector<std::string> args = {"list", "--json"};
  if (arg_bool(a, "refresh", false)) args.push_back("--refresh");
  auto w = where_flags(a, ctx);
  args.insert(args.end(), w.begin(), w.end());
  auto r = jobs_cli(ctx, args, true);
  if (!r.ok()) return tool_result::error(r.get_status().message());
  return tool_result::ok(strprintf("%zu batch(es)", r->size()), {{"batches", *r}});
}

tool_result jobs_status_tool(const json& a, tool_context& ctx) {
  std::vector<std::string> args = {"status", arg_str(a, "batch"), "--json"};
  auto w = where_flags(a, ctx);
  args.insert(args.end(), w.begin(), w.end());
  auto r = jobs_cli(ctx, args, true);
  if (!r.ok()) return tool_result::error(r.get_status().message());
  return tool_result::ok(arg_str(a, "batch") + ": " + std::to_string((*r)["jobs"].size()) + " job(s)", *r);
}

tool_result jobs_collect_tool(const json& a, tool_context& ctx) {
  std::vector<std::string> args = {"collect", arg_str(a, "batch"), "--json"};
  if (!arg_bool(a, "wait", false)) args.push_back("--no-wait");
  auto w = where_flags(a, ctx);
  args.insert(args.end(), w.begin(), w.end());
  auto r = jobs_cli(ctx, args, true);
  if (!r.ok()) return tool_result::error(r.get_status().message());
  return tool_result::ok(arg_str(a, "batch") + ": merged report", {{"batch", arg_str(a, "batch")}, {"report", *r}});
}

tool_result jobs_cancel_tool(const json& a, tool_context& ctx) {
  std::vector<std::string> args = {"cancel", arg_str(a, "batch")};
  for (const auto& j : arg_strings(a, "jobs")) args.push_back(j);
  auto w = where_flags(a, ctx);
  args.insert(args.end(), w.begin(), w.end());
  std::string table;
  auto r = jobs_cli(ctx, args, false, &table);
  if (!r.ok()) return tool_result::error(r.get_status().message());
  return tool_result::ok(arg_str(a, "batch") + ": cancellation requested",
                         {{"batch", arg_str(a, "batch")}, {"cancelled", true}, {"jobs_table", table}});
}

tool_result ray_status_tool(const json& a, tool_context& ctx) {
  std::string id = arg_str(a, "task_id");
  if (is_run_handle(id)) {
    auto s = ctx.runs().status(id, 20);
    if (!s) return tool_result::error("unknown task_id '" + id + "'");
    std::string st = magpie_state(json_string(*s, "state"));
    return tool_result::ok(id + ": " + st, {{"task_id", id}, {"status", st}, {"details", *s}});
  }
  auto r = jobs_cli(ctx, {"status", id, "--json"}, true);
  if (!r.ok()) return tool_result::error(r.get_status().message());
  bool running = false, failed = false;
  for (const auto& j : (*r)["jobs"]) {
    std::string st = json_string(j, "state");
    running = running || st == "PENDING" || st == "RUNNING" || st == "CONFIGURING" || st == "submitted";
    failed = failed || st == "FAILED" || st == "TIMEOUT" || st == "CANCELLED" || st == "NODE_FAIL" || st == "OUT_OF_MEMORY";
  }
  std::string st = running ? "RUNNING" : failed ? "FAILED" : "SUCCEEDED";
  return tool_result::ok(id + ": " + st, {{"task_id", id}, {"status", st}, {"details", *r}});
}

tool_result ray_result_tool(const json& a, tool_context& ctx) {
  std::string id = arg_str(a, "task_id");
  if (is_run_handle(id)) {
    auto s = ctx.runs().status(id, 0);
    if (!s) return tool_result::error("unknown task_id '" + id + "'");
    std::string state = json_string(*s, "state");
    if (state == "running" || state == "queued") return tool_result::error(id + " has not finished (" + state + ")");
    json out = s->contains("result") ? (*s)["result"] : json::object();
    out["_task_id"] = id;
    out["status"] = magpie_state(state);
    if (s->contains("error")) out["error"] = (*s)["error"];
    return tool_result::ok(id + ": " + magpie_state(state), out);
  }
  auto r = jobs_cli(ctx, {"collect", id, "--no-wait", "--json"}, true);
  if (!r.ok()) return tool_result::error(r.get_status().message());
  json out = {{"_task_id", id}, {"status", "SUCCEEDED"}, {"report", *r}};
  return tool_result::ok(id + ": merged report", out);
}

tool_result ray_cancel_tool(const json& a, tool_context& ctx) {
  std::string id = arg_str(a, "task_id");
  if (is_run_handle(id)) {
    if (!ctx.runs().status(id, 0)) return tool_result::error("unknown task_id '" + id + "'");
    bool ok = ctx.runs().cancel(id);
    return tool_result::ok(id + (ok ? ": cancellation requested" : ": not running"),
                           {{"task_id", id}, {"cancelled", ok}, {"message", ok ? "cancellation requested" : "the run has ended"}});
  }
  auto r = jobs_cli(ctx, {"cancel", id}, false);
  if (!r.ok()) return tool_result::error(r.get_status().message());
  return tool_result::ok(id + ": cancellation requested", {{"task_id", id}, {"cancelled", true}, {"message", "scancel sent"}});
}

tool_result ray_list_tool(const json& a, tool_context& ctx) {
  json tasks = json::array();
  for (const auto& r : ctx.runs().list())
    tasks.push_back({{"task_id", json_string(r, "run_id")}, {"status", magpie_state(json_string(r, "state"))},
                     {"kind", "run"}});
  auto r = jobs_cli(ctx, {"list", "--json", "--output-dir", arg_str(a, "output_dir", ctx.settings().default_output_dir.string())}, true);
  if (r.ok() && r->is_array()) {
    for (const auto& b : *r) tasks.push_back({{"task_id", json_string(b, "batch")}, {"status", "BATCH"}, {"kind", "batch"}});
  }
  return tool_result::ok(strprintf("%zu task(s)", tasks.size()), {{"total", tasks.size()}, {"tasks", tasks}});
}

json ray_common_props(bool with_id) {
  json p = {{"ray_cluster_address", s_string("Magpie's Ray address: accepted, not used")},
            {"ray_shared_storage_path", s_string("Magpie's Ray storage: accepted, not used")},
            {"output_dir", s_string("results directory whose batches/ are listed (default ./results)")}};
  if (with_id) p["task_id"] = s_string("a run handle (run-<n>) or a `magpie jobs` batch name/directory");
  return p;
}

}  // namespace

void add_jobs_tools(std::vector<tool_def>* out) {
  json where = {{"shared_dir", s_string("where batches are (default <output_dir>/batches)")},
                {"output_dir", s_string("results directory (default ./results)")}};
  auto with = [&](json extra) {
    json p = where;
    for (auto it = extra.begin(); it != extra.end(); ++it) p[it.key()] = it.value();
    return p;
  };
  json batch_row = {{"type", "object"}, {"description", "one batch (magpie jobs list --json)"}};
  out->push_back({"jobs_list", "List distributed job batches",
                  "Batches of `magpie jobs` (Slurm) under the shared directory with their job states.",
                  closed(with({{"refresh", with_default(s_boolean("ask the scheduler for unfinished jobs first"), false)}}), {}),
                  closed({{"batches", s_array(batch_row, "batches")}}, {"batches"}), true, jobs_list_tool});
  out->push_back({"jobs_status", "Job batch status", "Per-job scheduler state of one batch (`magpie jobs status`).",
                  closed(with({{"batch", s_string("batch name or directory")}}), {"batch"}),
                  closed({{"batch", s_string("batch directory")}, {"mode", s_string("analyze | compare | command")},
                          {"jobs", s_array(s_any_object("job"), "jobs")}},
                         {"batch", "jobs"}),
                  true, jobs_status_tool});
  out->push_back({"jobs_collect", "Collect a job batch",
                  "Merge a batch's jobs into one report (`magpie jobs collect`); by default without waiting "
                  "(unfinished jobs are reported as such).",
                  closed(with({{"batch", s_string("batch name or directory")},
                               {"wait", with_default(s_boolean("wait until every job has ended"), false)}}),
                         {"batch"}),
                  closed({{"batch", s_string("batch")}, {"report", s_any_object("merged analyze/compare report")}},
                         {"batch", "report"}),
                  false, jobs_collect_tool});
  out->push_back({"jobs_cancel", "Cancel a job batch", "Cancel a batch's unfinished jobs, or the named ones.",
                  closed(with({{"batch", s_string("batch name or directory")},
                               {"jobs", s_array(s_string("job name or id"), "only these jobs")}}),
                         {"batch"}),
                  closed({{"batch", s_string("batch")}, {"cancelled", s_boolean("requested")},
                          {"jobs_table", s_string("job states after the request")}},
                         {"batch", "cancelled", "jobs_table"}),
                  false, jobs_cancel_tool});
  json magpie_status = s_enum("Magpie's task status", {"PENDING", "RUNNING", "SUCCEEDED", "FAILED", "STOPPED", "UNKNOWN", "BATCH"});
  out->push_back({"ray_task_status", "Task status (Magpie's name)",
                  "Status of a background task: a run handle of this server (benchmark, benchmark_batch) or a "
                  "`magpie jobs` batch. There is no Ray executor: the task runs here or on Slurm.",
                  closed(ray_common_props(true), {"task_id"}),
                  closed({{"task_id", s_string("task")}, {"status", magpie_status}, {"details", s_any_object("full status")}},
                         {"task_id", "status", "details"}),
                  true, ray_status_tool});
  out->push_back({"ray_task_result", "Task result (Magpie's name)",
                  "Result of a finished task: the benchmark result of a run handle, or the merged report of a batch.",
                  closed(ray_common_props(true), {"task_id"}),
                  {{"type", "object"},
                   {"properties", {{"_task_id", s_string("task")}, {"status", magpie_status},
                                   {"error", s_string("why it failed")}, {"report", s_any_object("merged batch report")}}},
                   {"required", {"_task_id", "status"}},
                   {"description", "the run's result keys (benchmark_report.json) plus _task_id and status"}},
                  true, ray_result_tool});
  out->push_back({"ray_task_cancel", "Cancel a task (Magpie's name)", "Cancel a run handle or a batch's jobs.",
                  closed(ray_common_props(true), {"task_id"}),
                  closed({{"task_id", s_string("task")}, {"cancelled", s_boolean("requested")}, {"message", s_string("what happened")}},
                         {"task_id", "cancelled", "message"}),
                  false, ray_cancel_tool});
  json task = closed({{"task_id", s_string("run handle or batch")}, {"status", magpie_status},
                      {"kind", s_enum("run handle or jobs batch", {"run", "batch"})}},
                     {"task_id", "status", "kind"});
  out->push_back({"ray_task_list", "List tasks (Magpie's name)", "Run handles of this server and `magpie jobs` batches.",
                  closed(ray_common_props(false), {}),
                  closed({{"total", s_integer("tasks", 0)}, {"tasks", s_array(task, "tasks")}}, {"total", "tasks"}), true,
                  ray_list_tool});
}

}  // namespace magpie::mcp
