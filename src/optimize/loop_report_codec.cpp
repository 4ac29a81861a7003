// loop_report.json ⇄ optimize::loop_report. Encoders write each block's keys in the order the
// loop always wrote them; decoders refuse unknown and missing fields and unknown state words,
// naming the file and the field (e.g. "kernel.kernels[0].verdict").
#include "optimize/loop_report_codec.h"

#include "optimize/loop_report_codec_detail.h"

#include <algorithm>
#include <functional>
#include <initializer_list>

#include "core/enum_names.h"
#include "core/strings.h"
#include "optimize/decide_printer.h"
#include "optimize/measure_printer.h"
#include "optimize/server_info_codec.h"

namespace magpie::optimize {

namespace loop_report_detail {
namespace {

template <typename T>
status optional_block(const report_object& r, const char* key, std::optional<T>* out, const std::function<status(const report_object&, T*)>& fn) {
  if (!r.has(key)) return ok_status();
  T v{};
  MAGPIE_RETURN_IF_ERROR(fn(r.child(key), &v));
  *out = std::move(v);
  return ok_status();
}

template <typename T>
status array_optional_block(const report_object& r, const char* key, std::optional<std::vector<T>>* out,
                   const std::function<status(const report_object&, T*)>& fn) {
  if (!r.has(key)) return ok_status();
  std::vector<T> v;
  MAGPIE_RETURN_IF_ERROR(read_array<T>(r, key, &v, fn));
  *out = std::move(v);
  return ok_status();
}

// ---------------------------------------------------------------- blocks: encode
json opt_num_json(const std::optional<double>& v) { return v ? json_finite(*v) : json(nullptr); }

json step_json(const step_record& s) {
  json j = {{"status", step_status_name(s.status)}};
  if (s.seconds) j["seconds"] = *s.seconds;
  if (s.stop) j["stop"] = stop_reason_json(*s.stop);
  if (s.error) j["error"] = *s.error;
  if (s.resumed) j["resumed"] = true;
  return j;
}

json command_json(const command_record& c) {
  if (c.in_process) {
    json j = {{"name", c.name}, {"in_process", true}, {"argv", c.argv}, {"rc", c.rc}, {"seconds", c.seconds}};
    if (c.stdout_log) j["stdout"] = *c.stdout_log;
    return j;
  }
  json env = json::object();
  for (const auto& [k, v] : c.env) env[k] = v;
  return {{"name", c.name}, {"argv", c.argv}, {"cwd", c.cwd ? json(*c.cwd) : json(nullptr)}, {"env", env}, {"rc", c.rc},
          {"seconds", c.seconds}, {"stdout", c.stdout_log.value_or("")}, {"stderr", c.stderr_log.value_or("")}};
}

json server_json(const server_record& s) {
  return {{"tag", s.tag},   {"variant", s.variant}, {"url", s.url},         {"argv", s.argv},
          {"log", s.log},   {"ready_s", s.ready_s}, {"info", s.info.document}, {"exit", s.exit ? json(*s.exit) : json(nullptr)}};
}

json run_json(const run_record& r) {
  return {{"workspace", r.workspace}, {"url", r.url}, {"server", r.server}, {"metrics", metrics_json(r.metrics)},
          {"fingerprint", r.fp.total}, {"fingerprint_parts", fingerprint_json(r.fp)["parts"]}};
}

json runs_json(const std::vector<run_record>& rs) {
  json a = json::array();
  for (const auto& r : rs) a.push_back(run_json(r));
  return a;
}

json summary_json(const analysis_summary& s) {
  json kernels = json::array(), ops = json::array(), stages = json::object();
  for (const auto& k : s.top_kernels)
    kernels.push_back({{"name", k.name}, {"calls", k.calls}, {"total_us", k.total_us}, {"category", k.category}, {"bound", k.bound},
                       {"pct_roofline", k.pct_roofline}});
  for (const auto& o : s.top_ops)
    ops.push_back({{"name", o.name}, {"category", o.category}, {"kernel_time_us_sum", o.kernel_time_us_sum}, {"bound", o.bound},
                   {"pct_roofline_mean", o.pct_roofline_mean}});
  for (const auto& st : s.stages) {
    json top = json::array();
    for (const auto& row : st.top) {
      json r = json::object();
      for (const auto& [k, v] : row) r[k] = v;
      top.push_back(r);
    }
    stages[st.stage] = {{"step", st.step}, {"why", st.why}, {"error", st.error}, {"roofline_csv", st.roofline_csv}, {"top", top}};
  }
  json j = {{"gap_csv", s.gap_csv}, {"gpu_spec", s.gpu_spec}, {"gpu_timeline", s.gpu_timeline}, {"top_kernels", kernels}, {"top_ops", ops}};
  if (s.report_error) j["report_error"] = *s.report_error;
  j["stages"] = stages;
  j["stages_errors"] = s.stages_errors;
  j["sources_summary"] = s.sources_summary;
  if (s.trace) j["trace"] = *s.trace;
  return j;
}

json analysis_json(const analysis_record& a) {
  // The configured window is written as configured (floating point); the widened one as 0, 100.
  json window = a.window_widened ? json::array({0, 100}) : json::array({a.window_lo, a.window_hi});
  return {{"trace", a.trace}, {"window_pct", window}, {"window_widened", a.window_widened}, {"gap_csv", a.gap_csv},
          {"sources_json", a.sources_json}, {"summary", summary_json(a.summary)}};
}

json chosen_json(const chosen_kernel& c) {
  json above = json::array();
  for (const auto& k : c.skipped_above) above.push_back({{"rank", k.rank}, {"name", k.name}, {"why", k.why}});
  return {{"kernel", c.kernel}, {"rank", c.rank}, {"op", c.op}, {"source_file", c.source_file}, {"file", c.file}, {"path", c.path},
          {"line", c.line}, {"confidence", c.confidence ? json(*c.confidence) : json(nullptr)}, {"total_us", c.total_us},
          {"pct_total", c.pct_total}, {"calls", c.calls}, {"op_share_pct", c.op_share_pct},
          {"op_share_of_ranked_pct", c.op_share_of_ranked_pct}, {"skipped_above", above}};
}

json switch_json(const switch_record& s) {
  json j = {{"variant", s.variant}, {"control", s.control}, {"servers", s.servers}, {"server", s.server.document}};
  if (s.baseline_server) j["baseline_server"] = s.baseline_server->document;
  j["kernel_spec"] = kernel_spec_of(s.server, s.variant);
  return j;
}

json design_json(const loop_design& d) {
  json history = json::array();
  for (const auto& p : d.power.history) history.push_back({{"pairs", p.pairs}, {"mde_pct", p.mde_pct}});
  json j = {{"order", d.order}, {"servers", d.servers}, {"sequence", d.sequence}, {"pairs", d.pairs}, {"server_starts", d.server_starts},
            {"power_history", history}, {"seconds", d.seconds}, {"max_series_s", d.max_series_s}};
  if (d.power.budget_stop) j["budget_stop"] = *d.power.budget_stop;
  return j;
}

json power_json(const power_statement& p) {
  json j = {{"alpha", p.alpha}, {"power", p.power}, {"n_per_side", p.n_per_side}, {"target_mde_pct", p.target_mde_pct}};
  for (const auto& [m, v] : p.mde_pct) j["mde_pct"][m] = v;
  j["reached"] = p.reached;
  return j;
}

json e2e_json(const e2e_record& e) {
  json metrics = json::object();
  for (const auto& [k, c] : e.metrics) metrics[k] = metric_change_json(c);
  json j = {{"metrics", metrics}, {"primary_metric", e.primary_metric}, {"decision_metrics", e.decision_metrics}, {"alpha", e.alpha}};
  if (e.results_compare_error) j["results_compare_error"] = *e.results_compare_error;
  if (e.results_compare) {
    json all = json::object();
    for (const auto& [m, v] : *e.results_compare) all[m] = external_verdict_json(v);
    const std::string primary = e.decision_metrics.empty() ? std::string() : e.decision_metrics.front();
    j["magpie_results_compare"] = all.contains(primary) ? all[primary] : json(nullptr);
    j["magpie_results_compare_all"] = all;
  }
  if (e.store_hash_warning) j["store_hash_warning"] = *e.store_hash_warning;
  return j;
}

json prediction_json(const loop_prediction& p) {
  json j = kernel_prediction_json(p.predicted);
  j["measured_change_pct"] = p.measured_change_pct;
  j["measured_tpot_change_pct"] = p.measured_tpot_change_pct;
  return j;
}

json resumed_json(const resumed_record& r) {
  json j = {{"from", r.from}, {"from_step", r.from_step}, {"kept", r.kept}};
  if (r.num_prompts_was) j["num_prompts_was"] = *r.num_prompts_was;
  return j;
}

/// The blocks after `commands`, in the order a run fills them: (key, value or null when absent).
std::vector<std::pair<const char*, std::optional<json>>> step_blocks(const loop_report& r) {
  auto present = [](const auto& v, auto fn) { return v ? std::optional<json>(fn(*v)) : std::nullopt; };
  auto text = [](const std::optional<std::string>& s) { return s ? std::optional<json>(*s) : std::nullopt; };
  auto list = [](const auto& v, auto fn) -> std::optional<json> {
    if (!v) return std::nullopt;
    json a = json::array();
    for (const auto& x : *v) a.push_back(fn(x));
    return a;
  };
  std::optional<json> warmups;
  if (r.warmups) {
    warmups = json::object();
    for (const auto& w : *r.warmups)
      (*warmups)[w.tag] = {{"workspace", w.workspace}, {"num_prompts", w.num_prompts}, {"duration_s", opt_num_json(w.duration_s)},
                           {"output_throughput", opt_num_json(w.output_throughput)}};
  }
  std::optional<json> calibration, profile;
  if (const auto& c = r.calibration) {
    calibration = json{{"num_prompts", c->num_prompts}};
    if (c->probe_workspace) (*calibration)["probe_workspace"] = *c->probe_workspace;
    (*calibration)["how"] = c->how;
  }
  if (const auto& p = r.profile) {
    profile = json::object();
    if (p->workspace) (*profile)["workspace"] = *p->workspace;
    (*profile)["trace"] = p->trace;
    if (p->metrics) (*profile)["metrics"] = metrics_json(*p->metrics);
    if (p->profiling_enabled) (*profile)["profiling_enabled"] = *p->profiling_enabled;
  }
  std::optional<json> inputs;
  if (const auto& in = r.inputs)
    inputs = json{{"fingerprint", in->fingerprint ? json(*in->fingerprint) : json(nullptr)}, {"runs_checked", in->runs_checked}};
  return {{"server_baseline", present(r.server_baseline, [](const server_info& i) { return i.document; })},
          {"servers", list(r.servers, server_json)},
          {"warmups", warmups},
          {"num_prompts", r.num_prompts ? std::optional<json>(*r.num_prompts) : std::nullopt},
          {"calibration", calibration},
          {"initial_runs", present(r.initial_runs, runs_json)},
          {"profile", profile},
          {"analysis", present(r.analysis, analysis_json)},
          {"ranking", list(r.ranking, ranked_kernel_json)},
          {"chosen", present(r.chosen, chosen_json)},
          {"compare_report", text(r.compare_report)},
          {"kernel", present(r.kernel, gate_result_json)},
          {"switch", present(r.switched, switch_json)},
          {"baseline_runs", present(r.baseline_runs, runs_json)},
          {"after_runs", present(r.after_runs, runs_json)},
          {"design", present(r.design, design_json)},
          {"inputs", inputs},
          {"power", present(r.power, power_json)},
          {"prediction", present(r.prediction, prediction_json)},
          {"e2e", present(r.e2e, e2e_json)},
          {"control_result", text(r.control_result)},
          {"error", text(r.error)},
          {"error_code", text(r.error_code)},
          {"paused_after", text(r.paused_after)},
          {"interrupted", text(r.interrupted)},
          {"finished_at", text(r.finished_at)}};
}

}  // namespace
}  // namespace loop_report_detail

const char* loop_result_name(loop_result r) { return enum_name(loop_report_detail::k_loop_result_names, r, "failed"); }
std::optional<loop_result> parse_loop_result(std::string_view word) { return enum_parse(loop_report_detail::k_loop_result_names, word); }
const char* step_status_name(step_status s) { return enum_name(loop_report_detail::k_step_status_names, s, "failed"); }
std::optional<step_status> parse_step_status(std::string_view word) { return enum_parse(loop_report_detail::k_step_status_names, word); }

const std::vector<std::string>& step_keys(const std::string& step) {
  static const std::map<std::string, std::vector<std::string>> k = {
      {"start_server", {"server_baseline", "warmups", "servers"}},
      {"calibrate", {"num_prompts", "calibration"}},
      {"baseline_benchmarks", {"initial_runs"}},
      {"profiled_run", {"profile"}},
      {"trace_analysis", {"analysis"}},
      {"choose_kernel", {"ranking", "chosen"}},
      {"compare", {"kernel", "compare_report"}},
      {"switch_in", {"switch"}},
      {"after_benchmarks", {"baseline_runs", "after_runs", "design"}},
      {"inputs_check", {"inputs"}},
      {"e2e", {"e2e", "power", "prediction"}}};
  static const std::vector<std::string> none;
  auto it = k.find(step);
  return it == k.end() ? none : it->second;
}

json loop_report_json(const loop_report& r) {
  using namespace loop_report_detail;
  json j = json::object();
  auto put_text = [&](const char* k, const std::optional<std::string>& v) {
    if (v) j[k] = *v;
  };
  put_text("schema", r.schema);
  put_text("started_at", r.started_at);
  put_text("name", r.name);
  put_text("magpie", r.magpie);
  put_text("workspace", r.workspace);
  if (r.config) j["config"] = *r.config;
  put_text("control", r.control);
  if (r.runs_per_side) j["runs_per_side"] = *r.runs_per_side;
  if (const auto& b = r.benchmark) {
    json bench = b->client;
    bench["concurrency"] = b->concurrency;
    bench["target_s"] = b->target_s;
    bench["warmup_prompts"] = b->warmup_prompts;
    bench["profile_prompts"] = b->profile_prompts;
    j["benchmark"] = bench;
  }
  json steps = json::object();
  for (const auto& s : r.steps) steps[s.name] = step_json(s);
  j["steps"] = steps;
  j["stop"] = r.stop ? stop_reason_json(*r.stop) : json(nullptr);
  j["outcome"] = r.outcome ? json(loop_result_name(*r.outcome)) : json(nullptr);
  auto blocks = step_blocks(r);
  auto put_block = [&](const std::string& key) {
    for (auto& [k, v] : blocks)
      if (v && key == k) {
        j[k] = std::move(*v);
        v.reset();
      }
  };
  // A resumed report holds the kept steps' blocks first (in each step's key order), as resume
  // copied them before this run's first step.
  if (r.resumed) {
    for (const auto& s : r.resumed->kept)
      for (const auto& k : step_keys(s)) put_block(k);
    j["resumed"] = resumed_json(*r.resumed);
  }
  if (r.progress) j["progress"] = {{"step", r.progress->step}, {"index", r.progress->index}, {"total", r.progress->total}};
  json commands = json::array();
  for (const auto& c : r.commands) commands.push_back(command_json(c));
  j["commands"] = commands;
  for (auto& [k, v] : blocks)
    if (v) j[k] = std::move(*v);
  return j;
}

namespace loop_report_detail {
namespace {

/// The blocks every report has from its start: identity, config, steps, outcome, commands.
status decode_run_blocks(const report_object& o, loop_report* out) {
  loop_report& r = *out;
  for (auto [key, dst] : {std::pair{"schema", &r.schema}, {"started_at", &r.started_at}, {"name", &r.name}, {"magpie", &r.magpie},
                          {"workspace", &r.workspace}, {"control", &r.control}, {"compare_report", &r.compare_report},
                          {"control_result", &r.control_result}, {"error", &r.error}, {"error_code", &r.error_code},
                          {"paused_after", &r.paused_after}, {"interrupted", &r.interrupted}, {"finished_at", &r.finished_at}})
    MAGPIE_RETURN_IF_ERROR(o.optional(key, dst, &report_object::read_str));
  if (o.has("config")) r.config = o.value("config");
  MAGPIE_RETURN_IF_ERROR(o.optional("runs_per_side", &r.runs_per_side, &report_object::read_int));
  MAGPIE_RETURN_IF_ERROR(o.optional("num_prompts", &r.num_prompts, &report_object::read_int));
  MAGPIE_RETURN_IF_ERROR(optional_block<loop_benchmark>(o, "benchmark", &r.benchmark, dec_benchmark));
  MAGPIE_RETURN_IF_ERROR(read_members<step_record>(o, "steps", &r.steps, dec_step));
  if (o.has("stop") && !o.value("stop").is_null()) MAGPIE_RETURN_IF_ERROR(dec_stop(o.child("stop"), &r.stop.emplace()));
  if (o.has("outcome") && !o.value("outcome").is_null()) MAGPIE_RETURN_IF_ERROR(read_word(o, "outcome", k_loop_result_names, &r.outcome.emplace()));
  MAGPIE_RETURN_IF_ERROR(optional_block<resumed_record>(o, "resumed", &r.resumed, [](const report_object& f, resumed_record* v) {
    MAGPIE_RETURN_IF_ERROR(f.check({"from", "from_step", "kept", "num_prompts_was"}));
    MAGPIE_RETURN_IF_ERROR(f.str("from", &v->from));
    MAGPIE_RETURN_IF_ERROR(f.str("from_step", &v->from_step));
    MAGPIE_RETURN_IF_ERROR(f.strs("kept", &v->kept));
    return f.optional("num_prompts_was", &v->num_prompts_was, &report_object::read_int);
  }));
  MAGPIE_RETURN_IF_ERROR(optional_block<loop_progress>(o, "progress", &r.progress, [](const report_object& f, loop_progress* p) {
    MAGPIE_RETURN_IF_ERROR(f.check({"step", "index", "total"}));
    MAGPIE_RETURN_IF_ERROR(f.str("step", &p->step));
    MAGPIE_RETURN_IF_ERROR(f.integer("index", &p->index));
    return f.integer("total", &p->total);
  }));
  if (o.has("commands")) MAGPIE_RETURN_IF_ERROR(read_array<command_record>(o, "commands", &r.commands, dec_command));
  return ok_status();
}

/// The blocks the steps fill (step_keys), each there once its step ran.
status decode_step_blocks(const report_object& o, loop_report* out) {
  loop_report& r = *out;
  if (o.has("server_baseline")) MAGPIE_RETURN_IF_ERROR(dec_info(o, "server_baseline", &r.server_baseline.emplace()));
  MAGPIE_RETURN_IF_ERROR(array_optional_block<server_record>(o, "servers", &r.servers, dec_server));
  if (o.has("warmups")) MAGPIE_RETURN_IF_ERROR(read_members<warmup_record>(o, "warmups", &r.warmups.emplace(), dec_warmup));
  MAGPIE_RETURN_IF_ERROR(optional_block<calibration_record>(o, "calibration", &r.calibration, [](const report_object& f, calibration_record* c) {
    MAGPIE_RETURN_IF_ERROR(f.check({"num_prompts", "probe_workspace", "how"}));
    MAGPIE_RETURN_IF_ERROR(f.integer("num_prompts", &c->num_prompts));
    MAGPIE_RETURN_IF_ERROR(f.optional("probe_workspace", &c->probe_workspace, &report_object::read_str));
    return f.str("how", &c->how);
  }));
  MAGPIE_RETURN_IF_ERROR(array_optional_block<run_record>(o, "initial_runs", &r.initial_runs, dec_run));
  MAGPIE_RETURN_IF_ERROR(optional_block<profile_record>(o, "profile", &r.profile, [](const report_object& f, profile_record* p) {
    MAGPIE_RETURN_IF_ERROR(f.check({"workspace", "trace", "metrics", "profiling_enabled"}));
    MAGPIE_RETURN_IF_ERROR(f.optional("workspace", &p->workspace, &report_object::read_str));
    MAGPIE_RETURN_IF_ERROR(f.str("trace", &p->trace));
    if (f.has("metrics")) MAGPIE_RETURN_IF_ERROR(dec_metrics(f.child("metrics"), &p->metrics.emplace()));
    return f.optional("profiling_enabled", &p->profiling_enabled, &report_object::read_bool);
  }));
  MAGPIE_RETURN_IF_ERROR(optional_block<analysis_record>(o, "analysis", &r.analysis, dec_analysis));
  MAGPIE_RETURN_IF_ERROR(array_optional_block<ranked_kernel>(o, "ranking", &r.ranking, dec_ranked));
  MAGPIE_RETURN_IF_ERROR(optional_block<chosen_kernel>(o, "chosen", &r.chosen, dec_chosen));
  MAGPIE_RETURN_IF_ERROR(optional_block<gate_result>(o, "kernel", &r.kernel, dec_gate));
  MAGPIE_RETURN_IF_ERROR(optional_block<switch_record>(o, "switch", &r.switched, dec_switch));
  MAGPIE_RETURN_IF_ERROR(array_optional_block<run_record>(o, "baseline_runs", &r.baseline_runs, dec_run));
  MAGPIE_RETURN_IF_ERROR(array_optional_block<run_record>(o, "after_runs", &r.after_runs, dec_run));
  MAGPIE_RETURN_IF_ERROR(optional_block<loop_design>(o, "design", &r.design, dec_design));
  MAGPIE_RETURN_IF_ERROR(optional_block<inputs_record>(o, "inputs", &r.inputs, [](const report_object& f, inputs_record* in) {
    MAGPIE_RETURN_IF_ERROR(f.check({"fingerprint", "runs_checked"}));
    MAGPIE_RETURN_IF_ERROR(f.nullable("fingerprint", &in->fingerprint, &report_object::read_str));
    return f.integer("runs_checked", &in->runs_checked);
  }));
  MAGPIE_RETURN_IF_ERROR(optional_block<power_statement>(o, "power", &r.power, dec_power));
  MAGPIE_RETURN_IF_ERROR(optional_block<loop_prediction>(o, "prediction", &r.prediction, dec_prediction));
  MAGPIE_RETURN_IF_ERROR(optional_block<e2e_record>(o, "e2e", &r.e2e, dec_e2e));
  return ok_status();
}

}  // namespace
}  // namespace loop_report_detail

status_or<loop_report> decode_loop_report(const json& doc, const std::string& where) {
  using namespace loop_report_detail;
  report_object o(doc, where, "");
  MAGPIE_RETURN_IF_ERROR(o.check({"schema", "started_at", "name", "magpie", "workspace", "config", "control", "runs_per_side",
                                  "benchmark", "steps", "stop", "outcome", "resumed", "progress", "commands", "server_baseline",
                                  "servers", "warmups", "num_prompts", "calibration", "initial_runs", "profile", "analysis",
                                  "ranking", "chosen", "compare_report", "kernel", "switch", "baseline_runs", "after_runs",
                                  "design", "inputs", "power", "prediction", "e2e", "control_result", "error", "error_code",
                                  "paused_after", "interrupted", "finished_at"}));
  loop_report r;
  MAGPIE_RETURN_IF_ERROR(decode_run_blocks(o, &r));
  MAGPIE_RETURN_IF_ERROR(decode_step_blocks(o, &r));
  return r;
}

}  // namespace magpie::optimize
