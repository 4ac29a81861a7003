// Optimization-loop tools: optimize (run handle), optimize_status (state, the loop's progress
// from its report, the log tail), optimize_cancel. The loop runs as `magpie optimize` in its
// own process group; cancelling stops that tree, the servers it started included.
#include <algorithm>

#include "core/strings.h"
#include "core/workspace.h"
#include "mcp/run_registry.h"
#include "mcp/run_view_printer.h"
#include "core/json_schema.h"
#include "mcp/tool_args_codec.h"
#include "mcp/tool_schema.h"
#include "mcp/tool_util.h"

namespace magpie::mcp {

using namespace magpie::schema;  // the one schema library (core/json_schema.h)
namespace {

/// The loop's own view: steps done, the current one, outcome and stop (from loop_report.json).
json loop_progress(const fs::path& ws) {
  auto rep = read_json_file(ws / "loop_report.json");
  if (!rep.ok()) return {{"report", nullptr}};
  json steps = json::object();
  if (rep->contains("steps") && (*rep)["steps"].is_object())
    for (auto it = (*rep)["steps"].begin(); it != (*rep)["steps"].end(); ++it) steps[it.key()] = json_string(it.value(), "status");
  json p = {{"report", (ws / "loop_report.json").string()}, {"steps", steps},
            {"outcome", rep->value("outcome", json(nullptr))}, {"stop", rep->value("stop", json(nullptr))},
            {"current", rep->value("progress", json(nullptr))}};
  if (rep->contains("error")) p["error"] = (*rep)["error"];
  return p;
}

}  // namespace

json loop_progress_props() {
  // stop.details is the stop code's own record (docs/optimization-loop.md), e.g. a gate's
  // candidates: passed through as the loop wrote it.
  json stop = s_object({{"code", s_string("stop code, e.g. e2e_within_noise, source_mapping_ambiguous")},
                        {"category", s_string("the guide's wording for the code")},
                        {"message", s_string("what happened")},
                        {"details", {{"type", "object"}, {"description", "the stop code's record, as the loop wrote it"}}}},
                       {"code", "message"});
  return {{"report", or_null(s_string("loop_report.json (null until the loop has written it)"))},
          {"steps", {{"type", "object"}, {"description", "step name -> status (ok, failed, skipped...)"},
                     {"additionalProperties", s_string("status")}}},
          {"outcome", or_null(s_string("improved, stopped, failed, paused; null while running"))},
          {"stop", or_null(stop)},
          {"current", or_null(s_object({{"step", s_string("step in progress")}, {"index", s_integer("1-based", 1)},
                                        {"total", s_integer("steps in all", 1)}},
                                       {"step", "index", "total"}))},
          {"error", s_string("why the loop failed")},
          {"workspace", s_string("the loop's workspace (in result)")}};
}

namespace {

/// The optimize tool's arguments (its input schema below), decoded once. Empty strings and
/// absent numbers are "not given": the loop's own defaults apply.
struct optimize_args {
  std::string config, output_dir, workspace;
  std::string from_step, resume, until, control, order, servers, python;
  std::optional<int64_t> pairs, max_pairs, num_prompts, concurrency;
  std::optional<double> target_mde_pct, max_series_s;
  double timeout_s = 7200;

  static optimize_args decode(const json& a) {
    optimize_args r;
    r.config = arg_str(a, "config");
    r.output_dir = arg_str(a, "output_dir");
    r.workspace = arg_str(a, "workspace");
    r.from_step = arg_str(a, "from_step");
    r.resume = arg_str(a, "resume");
    r.until = arg_str(a, "until");
    r.control = arg_str(a, "control");
    r.order = arg_str(a, "order");
    r.servers = arg_str(a, "servers");
    r.python = arg_str(a, "python");
    auto count = [&](const char* k) { return a.contains(k) ? std::optional<int64_t>(static_cast<int64_t>(arg_num(a, k, 0))) : std::nullopt; };
    auto number = [&](const char* k) { return a.contains(k) ? std::optional<double>(arg_num(a, k, 0)) : std::nullopt; };
    r.pairs = count("pairs");
    r.max_pairs = count("max_pairs");
    r.num_prompts = count("num_prompts");
    r.concurrency = count("concurrency");
    r.target_mde_pct = number("target_mde_pct");
    r.max_series_s = number("max_series_s");
    r.timeout_s = arg_num(a, "timeout_seconds", 7200);
    return r;
  }

  /// The `magpie optimize` flags of the arguments given, in the schema's order.
  std::vector<std::string> flags() const {
    std::vector<std::string> v;
    for (const auto& [flag, value] : {std::pair<const char*, const std::string*>{"--from-step", &from_step}, {"--resume", &resume},
                                      {"--until", &until}, {"--control", &control}, {"--order", &order},
                                      {"--servers", &servers}, {"--python", &python}})
      if (!value->empty()) v.insert(v.end(), {flag, *value});
    for (const auto& [flag, value] : {std::pair<const char*, const std::optional<int64_t>*>{"--pairs", &pairs}, {"--max-pairs", &max_pairs},
                                      {"--num-prompts", &num_prompts}, {"--concurrency", &concurrency}})
      if (*value) v.insert(v.end(), {flag, std::to_string(static_cast<long long>(**value))});
    for (const auto& [flag, value] : {std::pair<const char*, const std::optional<double>*>{"--target-mde-pct", &target_mde_pct},
                                      {"--max-series-s", &max_series_s}})
      if (*value) v.insert(v.end(), {flag, strprintf("%.17g", **value)});
    return v;
  }
};

tool_result optimize_tool(const json& a, tool_context& ctx) {
  const optimize_args args = optimize_args::decode(a);
  const std::string& cfg = args.config;
  std::error_code ec;
  if (cfg.empty() || !fs::exists(cfg, ec)) return tool_result::error("config: no such file '" + cfg + "'");
  fs::path ws;
  if (!args.workspace.empty()) {
    ws = absolute_path(args.workspace);
  } else {
    auto out = output_dir_path(args.output_dir, ctx);
    if (!out.ok()) return tool_result::error(out.get_status().message());
    auto w = create_workspace(*out, "optimize", "mcp");
    if (!w.ok()) return tool_result::error(w.get_status().message());
    ws = w->dir;
  }
  spawn_spec spec;
  spec.argv = {ctx.settings().self_exe.string(), "optimize", "-c", absolute_path(cfg).string(), "--workspace", ws.string()};
  for (const auto& f : args.flags()) spec.argv.push_back(f);
  spec.env.emplace_back("MAGPIE_NO_PROGRESS", "1");
  finish_fn finish = [ws](const run_result& r, std::string* err) -> json {
    json p = loop_progress(ws);
    if (p["report"].is_null()) {
      *err = "the loop wrote no loop_report.json (" + r.describe() + "): " + r.output_tail(1500);
      return nullptr;
    }
    std::string outcome = json_string(p, "outcome");
    if (outcome == "failed") *err = "the loop failed: " + json_string(p, "error");
    else if (r.exit_code != 0 && !r.timed_out && r.term_signal == 0) *err = "magpie optimize exited " + std::to_string(r.exit_code);
    p["workspace"] = ws.string();
    return p;
  };
  run_info info = {{"config", absolute_path(cfg).string()}, {"workspace", ws.string()}};
  auto id = ctx.runs().start("optimize", spec, args.timeout_s, info, finish);
  if (!id.ok()) return tool_result::error("optimize could not start: " + id.get_status().message());
  return tool_result::ok("optimize started: " + *id,
                         {{"run_id", *id}, {"state", "running"}, {"workspace", ws.string()},
                          {"poll", "call optimize_status with this run_id; optimize_cancel stops the loop and its servers"}});
}

/// optimize_status / optimize_cancel: the run handle and how many log lines to return.
struct run_handle_args {
  std::string run_id;
  size_t tail_lines = 20;
  static run_handle_args decode(const json& a) {
    return {arg_str(a, "run_id"), static_cast<size_t>(arg_num(a, "tail_lines", 20))};
  }
};

tool_result optimize_status_tool(const json& a, tool_context& ctx) {
  const run_handle_args args = run_handle_args::decode(a);
  const std::string& id = args.run_id;
  auto s = ctx.runs().status(id, args.tail_lines);
  if (!s) return tool_result::error("unknown run_id '" + id + "'");
  json out = run_view_json(*s);
  auto ws = std::find_if(s->info.begin(), s->info.end(), [](const auto& kv) { return kv.first == "workspace"; });
  if (ws != s->info.end()) {
    json p = loop_progress(ws->second);
    out["loop"] = p;
    if (p["current"].is_object())
      ctx.progress(json_number(p["current"], "index", 0), json_number(p["current"], "total", 0), json_string(p["current"], "step"));
  }
  return tool_result::ok(id + ": " + run_state_name(s->state), out);
}

tool_result optimize_cancel_tool(const json& a, tool_context& ctx) {
  const std::string id = run_handle_args::decode(a).run_id;
  auto s = ctx.runs().status(id, 0);
  if (!s) return tool_result::error("unknown run_id '" + id + "'");
  bool ok = ctx.runs().cancel(id);
  return tool_result::ok(ok ? id + ": cancellation requested (the loop stops its servers and writes its report)" : id + " is not running",
                         {{"run_id", id}, {"cancelled", ok}, {"state", run_state_name(s->state)}});
}

/// optimize_status: a run handle's status plus `loop` (loop_progress); once finished, `result`
/// holds the same progress with the workspace (run_status_schema's union).
json optimize_status_schema() {
  json progress = {{"type", "object"}, {"properties", loop_progress_props()}, {"required", {"report"}},
                   {"additionalProperties", false}};
  json out = run_status_schema();
  out["properties"]["loop"] = progress;
  return out;
}

}  // namespace

void add_optimize_tools(std::vector<tool_def>* out) {
  out->push_back(
      {"optimize", "Run the optimization loop",
       "Run `magpie optimize` in the background and return a run handle at once: benchmark the server, profile it, "
       "rank kernels by GPU time, map them to source, compare the chosen kernel's candidates with a correctness "
       "gate, switch the winner in and measure end to end with interleaved runs (A/A control: control=aa). Poll "
       "optimize_status(run_id) for the step in progress; optimize_cancel stops the loop and every server it started.",
       closed({{"config", s_string("optimize.yaml (docs/optimization-loop.md)")},
               {"output_dir", s_string("a new workspace is created here (default ./results)")},
               {"workspace", s_string("use exactly this workspace directory")},
               {"from_step", s_string("resume from this step (keeps the earlier steps of --resume / the workspace)")},
               {"resume", s_string("workspace whose report provides the kept steps")},
               {"until", s_string("stop after this step (outcome paused), e.g. choose_kernel")},
               {"control", s_enum("A/A control", {"none", "aa"})},
               {"order", s_enum("side order of successive pairs", {"abba", "abab"})},
               {"servers", s_enum("a fresh server per run, or one per side", {"restart", "concurrent"})},
               {"pairs", s_integer("runs per side at least", 2)},
               {"max_pairs", s_integer("runs per side at most", 2)},
               {"target_mde_pct", s_number("add pairs until the smallest detectable change is at most this, %", 0)},
               {"max_series_s", s_number("time budget of the series, s: no pair beyond pairs starts unless it fits", 0)},
               {"num_prompts", s_integer("prompts per measured run (skips calibration)", 1)},
               {"concurrency", s_integer("requests in flight", 1)},
               {"python", s_string("value of {python} in the server command")},
               {"timeout_seconds", with_default(s_number("limit for the whole loop, s", 1), 7200)}},
              {"config"}),
       s_object({{"run_id", s_string("handle")}, {"state", s_enum("state", {"running"})}, {"workspace", s_string("workspace")},
                 {"poll", s_string("how to follow the run")}},
                {"run_id", "state", "workspace"}),
       false, optimize_tool});
  out->push_back({"optimize_status", "Optimization loop status",
                  "State of a background loop (running, succeeded, failed, cancelled, timed_out), the step in progress "
                  "and each step's status from its report, the outcome and stop reason, the last log lines.",
                  closed({{"run_id", s_string("handle from optimize")},
                          {"tail_lines", with_default(s_integer("log lines returned", 0), 20)}},
                         {"run_id"}),
                  optimize_status_schema(), true, optimize_status_tool});
  out->push_back({"optimize_cancel", "Cancel an optimization loop",
                  "Stop a running loop: its process tree (the loop, its benchmark client and every server it started) "
                  "is terminated; the report keeps the steps done so far.",
                  closed({{"run_id", s_string("handle from optimize")}}, {"run_id"}),
                  s_object({{"run_id", s_string("handle")}, {"cancelled", s_boolean("requested")},
                            {"state", s_enum("state when the request was made", run_state_names())}},
                           {"run_id", "cancelled"}),
                  false, optimize_cancel_tool});
}

}  // namespace magpie::mcp
