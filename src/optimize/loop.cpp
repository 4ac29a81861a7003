// Sequencing, resume and the report of the loop; the first four steps (baseline server,
// calibration, initial benchmarks, profiled run).
#include <algorithm>
#include <cmath>

#include "core/log.h"
#include "core/signal_capture.h"
#include "core/strings.h"
#include "core/workspace.h"
#include "optimize/loop_report_codec.h"
#include "optimize/config_printer.h"
#include "optimize/decide_printer.h"
#include "optimize/loop_run.h"
#include "optimize/measure_printer.h"
#include "optimize/report_printer.h"
#include "serve/bench_config_codec.h"

namespace magpie::optimize {

const std::vector<std::string> k_steps = {"start_server", "calibrate",   "baseline_benchmarks", "profiled_run",
                                          "trace_analysis", "choose_kernel", "compare",         "switch_in",
                                          "after_benchmarks", "inputs_check", "e2e"};

namespace {

size_t step_index(const std::string& name) {
  return static_cast<size_t>(std::find(k_steps.begin(), k_steps.end(), name) - k_steps.begin());
}

/// The newest file under `dir` (recursively) whose name contains ".pt.trace.json".
fs::path newest_trace(const fs::path& dir) {
  fs::path best;
  fs::file_time_type t{};
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return best;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec) || !contains(it->path().filename().string(), ".pt.trace.json")) continue;
    auto m = fs::last_write_time(it->path(), ec);
    if (best.empty() || m > t) best = it->path(), t = m;
  }
  return best;
}

/// Copies the blocks step `index` (of k_steps) filled from an earlier report (step_keys).
void keep_step_blocks(size_t index, const loop_report& from, loop_report* to) {
  switch (index) {
    case 0: to->server_baseline = from.server_baseline, to->warmups = from.warmups, to->servers = from.servers; break;
    case 1: to->num_prompts = from.num_prompts, to->calibration = from.calibration; break;
    case 2: to->initial_runs = from.initial_runs; break;
    case 3: to->profile = from.profile; break;
    case 4: to->analysis = from.analysis; break;
    case 5: to->ranking = from.ranking, to->chosen = from.chosen; break;
    case 6: to->kernel = from.kernel, to->compare_report = from.compare_report; break;
    case 7: to->switched = from.switched; break;
    case 8: to->baseline_runs = from.baseline_runs, to->after_runs = from.after_runs, to->design = from.design; break;
    case 9: to->inputs = from.inputs; break;
    default: to->e2e = from.e2e, to->power = from.power, to->prediction = from.prediction; break;
  }
}

}  // namespace

step_record* loop_report::step(const std::string& name) {
  auto it = std::find_if(steps.begin(), steps.end(), [&](const step_record& s) { return s.name == name; });
  return it == steps.end() ? nullptr : &*it;
}

const step_record* loop_report::step(const std::string& name) const { return const_cast<loop_report*>(this)->step(name); }

run_record run_record_of(const bench_result& r) {
  run_record out{r.workspace.string(), r.url, r.server_tag, {}, r.fp};
  for (const auto& [k, v] : r.metrics)
    if (std::isfinite(v)) out.metrics[k] = v;  // the report writes a non-finite value as null
  return out;
}

server_record server_record_of(const variant_server& s) {
  return {s.tag(), s.variant(), s.url(), s.argv(), s.log_path().string(), s.ready_s(), s.info(),
          s.exit_text().empty() ? std::nullopt : std::optional<std::string>(s.exit_text())};
}

loop_run::loop_run(const optimize_config& cfg, const loop_options& opts) : m_cfg(cfg), m_opts(opts), m_cmds(opts.workspace) {
  m_env.python = opts.python;
  m_env.workspace = opts.workspace;
  m_env.trace_dir = opts.workspace / "server_traces";
  const auto& w = cfg.workload;
  loop_benchmark bench;
  bench.client = serve::benchmark_config_json(w.bench)["client"];
  bench.concurrency = w.concurrency();
  bench.target_s = w.target_s;
  bench.warmup_prompts = w.warmup_prompts;  // -1: the measured runs' prompts
  bench.profile_prompts = w.profile_prompts;
  m_report.schema = "magpie-optimize-1";
  m_report.started_at = iso_time_now();
  m_report.name = cfg.name;
  m_report.magpie = opts.self_exe.string();
  m_report.workspace = opts.workspace.string();
  m_report.config = optimize_config_json(cfg);
  m_report.control = cfg.e2e.control;
  m_report.runs_per_side = cfg.e2e.pairs;
  m_report.benchmark = std::move(bench);
}

loop_run::~loop_run() {
  for (auto* s : {&m_baseline, &m_side_a, &m_side_b})
    if (*s) (*s)->stop();
}

status loop_run::load_resume() {
  if (!m_opts.until.empty() && step_index(m_opts.until) >= k_steps.size())
    return invalid_argument("--until %s: not a step (%s)", m_opts.until.c_str(), join(k_steps, ", ").c_str());
  if (m_opts.from_step.empty()) return ok_status();
  size_t idx = step_index(m_opts.from_step);
  if (idx >= k_steps.size())
    return invalid_argument("--from-step %s: not a step (%s)", m_opts.from_step.c_str(), join(k_steps, ", ").c_str());
  if (idx >= 1 && idx <= 3) {
    MAGPIE_LOG_INFO("--from-step %s needs the baseline server: starting from start_server", m_opts.from_step.c_str());
    idx = 0;
  }
  fs::path src = m_opts.resume_from.empty() ? m_opts.workspace : m_opts.resume_from;
  const fs::path file = src / "loop_report.json";
  auto prev = read_json_file(file);
  if (!prev.ok()) return error(prev.get_status().code(), "cannot resume: %s", prev.get_status().message().c_str());
  auto decoded = decode_loop_report(*prev, file.string());
  if (!decoded.ok()) return error(decoded.get_status().code(), "cannot resume: %s", decoded.get_status().message().c_str());
  m_resumed = std::move(*decoded);
  std::vector<std::string> kept;
  for (size_t i = 0; i < idx; ++i) {
    const std::string& s = k_steps[i];
    const step_record* rec = m_resumed.step(s);
    if (!rec || rec->status != step_status::ok)
      return error(status_code::failed_precondition, "cannot resume from %s: step %s of %s did not finish (%s)", m_opts.from_step.c_str(),
                   s.c_str(), file.c_str(), rec ? step_status_name(rec->status) : "not run");
    m_report.steps.push_back(*rec);
    m_report.steps.back().resumed = true;
    keep_step_blocks(i, m_resumed, &m_report);
    kept.push_back(s);
  }
  m_cmds.prepend(m_resumed.commands);
  m_report.resumed = resumed_record{src.string(), k_steps[idx], kept, std::nullopt};
  // An explicit prompt count (config or --num-prompts) applies to the runs this invocation makes.
  int64_t n = m_cfg.workload.num_prompts;
  if (n > 0 && m_report.num_prompts && *m_report.num_prompts != n) {
    m_report.resumed->num_prompts_was = *m_report.num_prompts;
    m_report.num_prompts = n;
  }
  m_first = idx;
  return ok_status();
}

void loop_run::save() {
  m_report.commands = m_cmds.commands();
  if (auto st = write_json_file(m_opts.workspace / "loop_report.json", loop_report_json(m_report)); !st.ok())
    MAGPIE_LOG_WARN("cannot write the report: %s", st.message().c_str());
}

step_record& loop_run::fresh_step(const std::string& name) {
  step_record* rec = m_report.step(name);
  if (!rec) rec = &m_report.steps.emplace_back();
  *rec = step_record{};
  rec->name = name;
  return *rec;
}

bool loop_run::step(const std::string& name, const std::function<status()>& fn) {
  size_t idx = step_index(name);
  if (idx < m_first) return true;
  MAGPIE_LOG_INFO("step %s (%zu/%zu)", name.c_str(), idx + 1, k_steps.size());
  fresh_step(name);
  m_report.progress = loop_progress{name, static_cast<int64_t>(idx + 1), static_cast<int64_t>(k_steps.size())};
  save();
  double t0 = monotonic_seconds();
  status st = interrupted().empty() ? fn() : error(status_code::cancelled, "%s", interrupted().c_str());
  step_record& rec = *m_report.step(name);
  rec.seconds = std::round((monotonic_seconds() - t0) * 100) / 100;
  if (!st.ok() && !interrupted().empty() && !contains(st.message(), "interrupted"))
    st = error(status_code::cancelled, "%s (%s)", st.message().c_str(), interrupted().c_str());
  if (st.ok() && m_stop) {
    rec.status = step_status::stopped;
    rec.stop = *m_stop;
    m_report.stop = *m_stop;
    m_report.outcome = loop_result::stopped;
    MAGPIE_LOG_INFO("stopped at %s: %s: %s", name.c_str(), m_stop->code.c_str(), m_stop->message.c_str());
  } else if (!st.ok()) {
    rec.status = step_status::failed;
    rec.error = st.message();
    m_report.outcome = loop_result::failed;
    m_report.error = st.message();
    auto colon = st.message().find(':');
    m_report.error_code = colon != std::string::npos && colon < 32 ? st.message().substr(0, colon) : "step_failed";
    MAGPIE_LOG_ERROR("step %s failed: %s", name.c_str(), st.message().c_str());
  } else {
    rec.status = step_status::ok;
  }
  if (st.ok() && !m_stop && name == m_opts.until) {
    m_report.outcome = loop_result::paused;
    m_report.paused_after = name;
    MAGPIE_LOG_INFO("paused after %s (--until); continue with --from-step %s", name.c_str(),
                    idx + 1 < k_steps.size() ? k_steps[idx + 1].c_str() : name.c_str());
    save();
    return false;
  }
  save();
  return st.ok() && !m_stop;
}

loop_report loop_run::run() {
  signal_capture signals;  // SIGINT/SIGTERM/SIGHUP end the current step; servers are stopped, the report written
  bool go = step("start_server", [&] { return step_start_server(); }) && step("calibrate", [&] { return step_calibrate(); }) &&
            step("baseline_benchmarks", [&] { return step_baseline_benchmarks(); }) &&
            step("profiled_run", [&] { return step_profiled_run(); });
  if (m_baseline) m_baseline->stop();  // the GPU is left to the compare; switch_in starts new servers
  go = go && step("trace_analysis", [&] { return step_trace_analysis(); }) &&
       step("choose_kernel", [&] { return step_choose_kernel(); }) && step("compare", [&] { return step_compare(); }) &&
       step("switch_in", [&] { return step_switch_in(); }) &&
       step("after_benchmarks", [&] { return step_after_benchmarks(); }) &&
       step("inputs_check", [&] { return step_inputs_check(); }) && step("e2e", [&] { return step_e2e(); });
  for (auto* s : {&m_baseline, &m_side_a, &m_side_b})
    if (*s) (*s)->stop();
  if (!m_report.outcome) m_report.outcome = go ? loop_result::improved : loop_result::failed;
  if (!interrupted().empty()) m_report.interrupted = interrupted();
  m_report.finished_at = iso_time_now();
  m_report.progress.reset();
  save();
  return m_report;
}

// ---------------------------------------------------------------- servers and runs

status_or<std::unique_ptr<variant_server>> loop_run::start_warm(const std::string& tag, const std::string& variant, int port,
                                                               bool candidate) {
  MAGPIE_ASSIGN_OR_RETURN(auto s, variant_server::spawn(m_cfg, m_env, tag, variant, port));
  MAGPIE_RETURN_IF_ERROR(s->wait_ready(m_cfg.server.ready_timeout_s));
  ++m_starts;
  if (!m_report.servers) m_report.servers.emplace();
  m_report.servers->push_back(server_record_of(*s));
  MAGPIE_RETURN_IF_ERROR(check_identity(*s, candidate));
  if (m_stop) return s;
  MAGPIE_RETURN_IF_ERROR(warm_up(*s));
  return s;
}

status loop_run::warm_up(const variant_server& s) {
  // Default: the measured runs' own requests (same seed and count), so every prompt length a run
  // sends has been served once (per-shape plans and compilations happen here, not in a run).
  const auto& w = m_cfg.workload;
  int64_t runs = m_report.num_prompts.value_or(w.num_prompts);
  int64_t n = w.warmup_prompts >= 0 ? w.warmup_prompts : runs > 0 ? runs : 3 * w.concurrency();
  if (n <= 0) return ok_status();
  MAGPIE_ASSIGN_OR_RETURN(bench_result r, bench("warmup_" + s.tag(), s, n, "bench/warmup_" + s.tag()));
  const run_record rec = run_record_of(r);
  auto metric = [&](const char* k) { return rec.metrics.count(k) ? std::optional<double>(rec.metrics.at(k)) : std::nullopt; };
  if (!m_report.warmups) m_report.warmups.emplace();
  auto it = std::find_if(m_report.warmups->begin(), m_report.warmups->end(), [&](const warmup_record& x) { return x.tag == s.tag(); });
  if (it == m_report.warmups->end()) it = m_report.warmups->insert(it, warmup_record{});
  *it = warmup_record{s.tag(), r.workspace.string(), n, metric("duration_s"), metric("output_throughput")};
  MAGPIE_LOG_INFO("warm-up (%s): %lld requests, discarded", s.tag().c_str(), static_cast<long long>(n));
  return ok_status();
}

status_or<bench_result> loop_run::bench(const std::string& name, const variant_server& s, int64_t n, const std::string& dir,
                                        bool profile) {
  bench_request q;
  q.name = name;
  q.server = &s;
  q.num_prompts = n;
  q.out_dir = m_opts.workspace / dir;
  q.profile = profile;
  return run_benchmark(m_cfg, m_env, m_cmds, q);
}

status loop_run::step_start_server() {
  MAGPIE_ASSIGN_OR_RETURN(m_port, serve::free_port());
  MAGPIE_ASSIGN_OR_RETURN(auto s, variant_server::spawn(m_cfg, m_env, "baseline", m_cfg.server.baseline, m_port));
  MAGPIE_RETURN_IF_ERROR(s->wait_ready(m_cfg.server.ready_timeout_s));
  ++m_starts;
  m_report.server_baseline = s->info();
  m_report.servers = std::vector<server_record>{server_record_of(*s)};
  m_baseline = std::move(s);
  return warm_up(*m_baseline);
}

status loop_run::step_calibrate() {
  const auto& w = m_cfg.workload;
  int64_t c = w.concurrency();
  if (w.num_prompts > 0) {
    m_report.num_prompts = w.num_prompts;
    m_report.calibration = calibration_record{w.num_prompts, std::nullopt, "workload.num_prompts"};
    return ok_status();
  }
  int64_t probe = w.calibration_prompts > 0 ? w.calibration_prompts : 3 * c;
  MAGPIE_ASSIGN_OR_RETURN(bench_result r, bench("calibrate", *m_baseline, probe, "bench/calibrate"));
  double done = r.metrics.count("completed") ? r.metrics["completed"] : static_cast<double>(probe);
  double dur = std::max(r.metrics.count("duration_s") ? r.metrics["duration_s"] : 1e-3, 1e-3);
  double rate = done / dur;
  int64_t n = static_cast<int64_t>(std::llround(rate * w.target_s / static_cast<double>(c))) * c;
  n = std::clamp<int64_t>(n, 2 * c, 50000);
  m_report.num_prompts = n;
  m_report.calibration = calibration_record{n, r.workspace.string(),
                                            strprintf("%lld probe requests took %.2f s (%.1f req/s); target %g s",
                                                      static_cast<long long>(probe), dur, rate, w.target_s)};
  return ok_status();
}

status_or<int64_t> loop_run::calibrated_prompts() const {
  const auto& n = m_report.num_prompts;
  if (!n || *n < 1) return error(status_code::failed_precondition, "loop report: num_prompts is not set (the calibrate step did not run)");
  return *n;
}

status loop_run::step_baseline_benchmarks() {
  std::vector<run_record> runs;
  MAGPIE_ASSIGN_OR_RETURN(int64_t n, calibrated_prompts());
  for (int64_t i = 0; i < m_cfg.workload.initial_runs; ++i) {
    MAGPIE_ASSIGN_OR_RETURN(bench_result r, bench(strprintf("bench_initial_%lld", static_cast<long long>(i)), *m_baseline, n,
                                                  strprintf("bench/initial_%lld", static_cast<long long>(i))));
    MAGPIE_LOG_INFO("initial run %lld: %.1f tok/s output, TPOT %.3f ms", static_cast<long long>(i), r.metrics["output_throughput"],
                    r.metrics.count("tpot_mean_ms") ? r.metrics["tpot_mean_ms"] : 0.0);
    runs.push_back(run_record_of(r));
  }
  m_report.initial_runs = std::move(runs);
  return ok_status();
}

status loop_run::step_profiled_run() {
  MAGPIE_ASSIGN_OR_RETURN(bench_result r, bench("bench_profiled", *m_baseline, m_cfg.workload.profile_prompts, "bench/profiled", true));
  fs::path trace = newest_trace(r.workspace / "torch_trace");
  if (trace.empty()) trace = newest_trace(m_env.trace_dir);
  if (trace.empty())
    return error(status_code::failed_precondition, "profile_failed: the profiled run left no trace in %s/torch_trace or %s", r.workspace.c_str(),
                               m_env.trace_dir.c_str());
  m_report.profile = profile_record{r.workspace.string(), trace.string(), run_record_of(r).metrics, true};
  return ok_status();
}

status_or<loop_outcome> run_loop(const optimize_config& cfg, const loop_options& opts) {
  MAGPIE_RETURN_IF_ERROR(make_dirs(opts.workspace));
  loop_run run(cfg, opts);
  MAGPIE_RETURN_IF_ERROR(run.load_resume());
  loop_outcome o;
  o.report = run.run();
  o.control_failed = run.control_failed();
  o.report_json = opts.workspace / "loop_report.json";
  o.report_md = opts.workspace / "loop_report.md";
  o.outcome = o.report.outcome.value_or(loop_result::failed);  // run() always sets it
  if (auto st = write_file_atomic(o.report_md, report_markdown(o.report)); !st.ok())
    MAGPIE_LOG_WARN("cannot write %s: %s", o.report_md.c_str(), st.message().c_str());
  return o;
}

}  // namespace magpie::optimize
