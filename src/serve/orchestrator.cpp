#include "serve/orchestrator.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <cmath>

#include "core/log.h"
#include "core/progress.h"
#include "core/signal_capture.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "core/workspace.h"
#include "core/yaml_json.h"
#include "gpu/detect.h"
#include "gpu/gpu_printer.h"
#include "gpu/select.h"
#include "serve/bench_config_codec.h"
#include "serve/launcher.h"
#include "serve/preflight.h"
#include "serve/profiling.h"
#include "serve/server_lifecycle.h"
#include "serve/server_lifecycle_codec.h"
#include "serve/server_plan_printer.h"

namespace magpie::serve {

namespace {

std::string interrupted() {
  int s = signal_capture::last_signal();
  return s ? strprintf("interrupted by signal %d (%s)", s, strsignal(s)) : std::string();
}

std::string detect_vllm_version(const benchmark_config& c) {
  if (c.framework != serving_framework::vllm || c.run_mode != server_run_mode::local || !c.profiler.torch_profiler || c.profiler.vllm_profiler_args != profiler_delivery::automatic ||
      !c.server.command.empty())
    return {};
  spawn_spec s;
  s.argv = {"vllm", "--version"};
  s.env = c.envs;
  auto r = run_command(s, 120.0);
  if (!r.ok() || !r->success()) return {};
  return parse_version(r->out + r->err);
}

status select_gpus(benchmark_run& run, std::string* vendor) {
  benchmark_config& c = run.cfg;
  gpu::gpu_info info = gpu::detect();
  *vendor = info.known_vendor();
  if (c.gpu_arch.empty()) c.gpu_arch = info.architecture;
  if (!info.devices.empty()) run.gpu_name = info.devices.front().name;
  if (!c.gpu_selection.auto_select || gpu::has_visible_devices(c.envs)) return ok_status();
  if (!info.detected()) {
    run.warnings.push_back("no GPU detected (nvidia-smi / rocminfo): GPU auto-selection skipped");
    return ok_status();
  }
  gpu::selection_request req;
  req.count = c.gpu_selection.count > 0 ? c.gpu_selection.count : c.tp();
  req.min_free_memory_gb = c.gpu_selection.min_free_memory_gb;
  req.candidates = c.gpu_selection.candidates;
  MAGPIE_ASSIGN_OR_RETURN(gpu::selection sel, gpu::select_idle_gpus(req));
  for (const auto& d : info.devices)
    if (!sel.indices.empty() && d.index == sel.indices.front()) run.gpu_name = d.name;
  for (const auto& [k, v] : sel.env) c.set_env(k, v);
  run.gpu_assignment = gpu::selection_json(sel);
  MAGPIE_LOG_INFO("GPU selection: %s", join(std::vector<std::string>{dump_compact(json(sel.indices))}, "").c_str());
  return ok_status();
}

status save_config_files(const benchmark_run& run) {
  MAGPIE_RETURN_IF_ERROR(write_file_atomic(run.workspace / "config.yaml", json_to_yaml(json{{"benchmark", benchmark_config_json(run.cfg)}})));
  if (!run.cfg.config_path.empty()) {
    MAGPIE_ASSIGN_OR_RETURN(std::string text, read_file(run.cfg.config_path));
    MAGPIE_RETURN_IF_ERROR(write_file_atomic(run.workspace / "input_config.yaml", text));
  }
  return ok_status();
}

/// Seconds left until `deadline` (monotonic_seconds), at least 0.1: a bound for one exchange.
double left_until(double deadline, double cap) { return std::max(0.1, std::min(cap, deadline - monotonic_seconds())); }

/// The client run(s) against `url`; profiling around the measured run or in a separate pass.
/// `model`: the served model the pre-flight found ("" = the config's or the server's first).
void run_clients(benchmark_run& run, const endpoint_url& url, server_process* server, const std::string& server_trace_dir,
                 double deadline, const std::string& model = {}) {
  const benchmark_config& c = run.cfg;
  auto cc = make_client_config(c, url);
  if (!cc.ok()) {
    run.errors.push_back(cc.get_status().message());
    return;
  }
  cc->deadline_s = deadline;
  if (cc->model.empty()) cc->model = model;
  auto start_prof = [&, deadline]() { return start_profile(url, c.framework, server_trace_dir, left_until(deadline, 120.0)); };
  auto stop_prof = [&, deadline]() { return stop_profile(url, left_until(deadline, c.profiler.trace_wait_s)); };
  client_hooks hooks;
  hooks.abort_check = [&]() -> std::string {
    if (std::string s = interrupted(); !s.empty()) return s;
    if (server && server->exited())
      return "the server exited during the benchmark (" + server->exit_description() + "); see server.log";
    if (monotonic_seconds() > deadline) return strprintf("benchmark timeout (%.0f s) reached", c.timeout_seconds);
    return {};
  };
  progress_bar bar("requests", cc->dataset.num_prompts);
  hooks.on_progress = [&](size_t done, size_t) { bar.set(done); };
  bool profile = c.profiler.torch_profiler;
  bool separate = profile && c.profiler.profile_prompts > 0;
  if (profile && !separate) {
    hooks.before_run = start_prof;
    hooks.after_run = stop_prof;
  }
  auto r = run_client(*cc, hooks);
  bar.finish();
  if (!r.ok()) {
    run.errors.push_back("client: " + r.get_status().message());
    return;
  }
  run.client = std::move(*r);
  run.profiled = profile && !separate;
  if (!run.client->aborted.empty()) run.errors.push_back("the run stopped early: " + run.client->aborted);
  if (separate && run.client->aborted.empty()) {
    client_config pc = *cc;
    pc.dataset.num_prompts = static_cast<size_t>(c.profiler.profile_prompts);
    pc.num_warmups = 0;
    pc.request_id_prefix = strprintf("magpie-%d-profile", static_cast<int>(getpid()));
    client_hooks ph;
    ph.abort_check = hooks.abort_check;
    pc.model = run.client->model;
    ph.before_run = start_prof;
    ph.after_run = stop_prof;
    MAGPIE_LOG_INFO("profiling pass: %lld request(s)", static_cast<long long>(c.profiler.profile_prompts));
    auto p = run_client(pc, ph);
    if (p.ok()) run.profile_pass = std::move(*p);
    else run.errors.push_back("profiling pass: " + p.get_status().message());
    run.profiled = true;
  }
}

void write_client_files(benchmark_run& run) {
  if (!run.client) return;
  if (auto st = write_json_file(run.workspace / "serving_result.json", run.client->vllm_json); st.ok())
    run.files["serving_result"] = "serving_result.json";
  std::string lines = request_details_jsonl(run.client->warmups, run.client->t0_ns) +
                      request_details_jsonl(run.client->records, run.client->t0_ns);
  if (auto st = write_file_atomic(run.workspace / "requests.jsonl", lines); st.ok()) run.files["requests"] = "requests.jsonl";
}

/// `settle_s` 0: the writer is gone (server stopped), list what is there.
void collect_and_analyse_traces(benchmark_run& run, const fs::path& host_trace_dir, const std::string& copy_from, double settle_s) {
  if (!run.profiled) return;
  fs::path dir = run.workspace / "torch_trace";
  if (!copy_from.empty()) {
    std::error_code ec;
    for (const auto& p : wait_for_traces(copy_from, run.cfg.profiler.trace_wait_s, settle_s))
      fs::copy_file(p, dir / p.filename(), fs::copy_options::overwrite_existing, ec);
  }
  auto files = wait_for_traces(copy_from.empty() ? host_trace_dir : dir, settle_s > 0 ? run.cfg.profiler.trace_wait_s : 0, settle_s);
  if (files.empty()) {
    run.traces.errors.push_back("profiling was enabled but no trace files appeared in " + dir.string());
    return;
  }
  run.files["torch_trace"] = "torch_trace";
  MAGPIE_LOG_INFO("trace post-processing: %zu trace file(s)", files.size());
  run.traces = post_process_traces(run.cfg, dir, run.workspace, run.gpu_name);
}

/// Failures can drain the remaining requests (connection refused) before the abort check sees
/// the exit; a server that died during the run always fails it.
void note_server_death(benchmark_run& run, const server_process& server) {
  bool failures = run.client && run.client->metrics.failed > 0;
  for (int i = 0; failures && i < 10 && !server.exited(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (!server.exited()) return;
  std::string msg = "the server exited during the benchmark (" + server.exit_description() + "); see server.log";
  for (const auto& e : run.errors)
    if (contains(e, "the server exited during the benchmark")) return;
  run.errors.push_back(msg);
}

/// profiler.system_profiler: the plan says whether nsys wraps the server or why not.
void note_system_profiler(benchmark_run& run, const server_plan& plan) {
  if (plan.system_profiler.is_null()) return;
  if (plan.system_profiler.contains("skipped")) {
    std::string why = json_string(plan.system_profiler, "skipped");
    MAGPIE_LOG_WARN("%s", why.c_str());
    run.warnings.push_back(why);
    return;
  }
  (void)make_dirs(run.workspace / "system_profile");
}

void collect_system_profile(benchmark_run& run, const server_plan& plan) {
  if (plan.system_profiler.is_null() || plan.system_profiler.contains("skipped")) return;
  std::error_code ec;
  fs::path report = json_string(plan.system_profiler, "report");
  if (fs::exists(report, ec)) run.files["system_profile"] = fs::relative(report, run.workspace, ec).string();
  else run.warnings.push_back("the system profiler (nsys) wrote no report at " + report.string() + "; see server.log");
}

/// server_lifecycle: reuse a recorded server or start one that outlives this run.
void run_with_lifecycle(benchmark_run& run) {
  benchmark_config& c = run.cfg;
  launch_context ctx;
  ctx.workspace = run.workspace;
  ctx.task_id = sanitize_label(fs::path(run.workspace).filename().string());
  ctx.port = c.server.port > 0 ? c.server.port : static_cast<int>(c.env_int("PORT", 8888));  // Magpie's PORT default
  ctx.vendor = gpu::detect().known_vendor();
  ctx.vllm_version = detect_vllm_version(c);
  auto plan = plan_server(c, ctx);
  auto found = plan.ok() ? find_reusable_server(c, *plan) : status_or<persistent_server>(plan.get_status());
  if (!found.ok()) {
    run.errors.push_back(found.get_status().message());
    return;
  }
  persistent_server srv = *found;
  if (!srv.reused) {
    std::string vendor;
    if (auto st = select_gpus(run, &vendor); !st.ok()) {
      run.errors.push_back(st.message());
      return;
    }
    plan = plan_server(c, ctx);
    if (!plan.ok()) {
      run.errors.push_back(plan.get_status().message());
      return;
    }
    note_system_profiler(run, *plan);
    auto started = start_persistent_server(c, *plan, run.workspace / "server.log", interrupted);
    run.files["server_log"] = "server.log";
    if (!started.ok()) {
      run.errors.push_back(started.get_status().message());
      return;
    }
    srv = *started;
  } else {
    MAGPIE_LOG_INFO("server_lifecycle: reusing the server on port %d (%s)", ctx.port,
                    srv.container.empty() ? strprintf("pid %d", static_cast<int>(srv.pid)).c_str() : srv.container.c_str());
  }
  run.server = server_plan_json(*plan);
  run.server["lifecycle"] = persistent_server_json(srv);
  // With server reuse, timeout_seconds bounds the client phase only (Magpie).
  run_clients(run, plan->url, nullptr, plan->server_trace_dir, monotonic_seconds() + c.timeout_seconds);
  if (run.profiled) (void)wait_for_traces(plan->host_trace_dir, c.profiler.trace_wait_s, 1.0);
  run.server["exit"] = release_persistent_server(srv, c.lifecycle.cleanup, run.workspace);
  MAGPIE_LOG_INFO("server: %s", json_string(run.server, "exit").c_str());
  collect_system_profile(run, *plan);
  collect_and_analyse_traces(run, plan->host_trace_dir, "", 0.0);
}

void run_orchestrated(benchmark_run& run, double deadline) {
  benchmark_config& c = run.cfg;
  if (c.lifecycle.enabled) {
    run_with_lifecycle(run);
    return;
  }
  std::string vendor;
  if (auto st = select_gpus(run, &vendor); !st.ok()) {
    run.errors.push_back(st.message());
    return;
  }
  launch_context ctx;
  ctx.workspace = run.workspace;
  ctx.vendor = vendor;
  ctx.task_id = sanitize_label(fs::path(run.workspace).filename().string());
  ctx.vllm_version = detect_vllm_version(c);
  int port = c.server.port > 0 ? c.server.port : static_cast<int>(c.env_int("PORT", 0));
  if (port <= 0) {
    auto p = free_port();
    if (!p.ok()) {
      run.errors.push_back(p.get_status().message());
      return;
    }
    port = *p;
  }
  ctx.port = port;
  auto plan = plan_server(c, ctx);
  if (!plan.ok()) {
    run.errors.push_back(plan.get_status().message());
    return;
  }
  run.server = server_plan_json(*plan);
  note_system_profiler(run, *plan);
  if (c.profiler.torch_profiler) (void)make_dirs(plan->host_trace_dir);  // no empty torch_trace/ without profiling
  auto sp = server_process::start(*plan, run.workspace / "server.log");
  if (!sp.ok()) {
    run.errors.push_back("cannot start the server: " + sp.get_status().message());
    return;
  }
  run.files["server_log"] = "server.log";
  std::unique_ptr<server_process> server = std::move(*sp);
  run.server["pid"] = server->pid();
  double t_ready = monotonic_seconds();
  double ready_budget = std::min(c.server.ready_timeout_s, std::max(1.0, deadline - monotonic_seconds()));
  status ready = server->wait_ready(ready_budget, interrupted);
  if (!ready.ok()) {
    run.errors.push_back(ready.message());
  } else {
    run.server["ready_after_s"] = monotonic_seconds() - t_ready;
    run_clients(run, plan->url, server.get(), plan->server_trace_dir, deadline);
    note_server_death(run, *server);
    if (run.profiled && !server->exited()) (void)wait_for_traces(plan->host_trace_dir, c.profiler.trace_wait_s, 1.0);
  }
  run.server["exit"] = server->stop();
  MAGPIE_LOG_INFO("server stopped: %s", json_string(run.server, "exit").c_str());
  collect_system_profile(run, *plan);
  collect_and_analyse_traces(run, plan->host_trace_dir, "", 0.0);
}

}  // namespace

status_or<dry_run_plan> plan_dry_run(const benchmark_config& cfg, const run_options& opts) {
  MAGPIE_RETURN_IF_ERROR(validate_config(cfg));
  dry_run_plan out;
  out.config = cfg;
  fs::path ws = absolute_path(opts.output_dir / ("benchmark_" + cfg.framework_name() + "_DRYRUN"));
  endpoint_url url;
  if (!cfg.base_url.empty()) {
    MAGPIE_ASSIGN_OR_RETURN(url, parse_base_url(cfg.base_url));
  } else {
    launch_context ctx;
    ctx.workspace = ws;
    ctx.port = cfg.server.port > 0 ? cfg.server.port : static_cast<int>(cfg.env_int("PORT", 8000));
    ctx.vendor = gpu::detect().known_vendor();
    ctx.task_id = "DRYRUN";
    MAGPIE_ASSIGN_OR_RETURN(server_plan plan, plan_server(cfg, ctx));
    url = plan.url;
    out.server = std::move(plan);
  }
  MAGPIE_ASSIGN_OR_RETURN(out.client, make_client_config(cfg, url));
  return out;
}

status_or<benchmark_run> run_benchmark(const benchmark_config& cfg, const run_options& opts) {
  MAGPIE_RETURN_IF_ERROR(validate_config(cfg));
  benchmark_run run;
  run.cfg = cfg;
  run.magpie_argv = opts.magpie_argv;
  run.started_at = iso_time_now();
  run.warnings = cfg.warnings;
  double start = monotonic_seconds(), deadline = start + cfg.timeout_seconds;
  // Nothing is written before the pre-flight passed (preflight.h).
  MAGPIE_ASSIGN_OR_RETURN(preflight_result pre, preflight(cfg, opts, deadline));
  MAGPIE_ASSIGN_OR_RETURN(workspace ws, create_workspace(opts.output_dir, "benchmark", cfg.base_url.empty() ? cfg.framework_name() : "external"));
  run.workspace = ws.dir;
  MAGPIE_RETURN_IF_ERROR(save_config_files(run));
  MAGPIE_LOG_INFO("workspace: %s", run.workspace.c_str());
  signal_capture signals;  // SIGINT/SIGTERM/SIGHUP end the run cleanly (server group stopped, partial reports written)
  if (!cfg.base_url.empty()) {
    auto url = parse_base_url(cfg.base_url);
    if (!url.ok()) return url.get_status();
    if (cfg.profiler.torch_profiler) (void)make_dirs(run.workspace / "torch_trace");
    run.server = {{"url", url->to_string()}, {"launched", false}};
    run_clients(run, *url, nullptr, opts.server_trace_dir, deadline, pre.served_model);
    if (run.profiled && opts.server_trace_dir.empty())
      run.traces.warnings.push_back("the server wrote its traces to its own profiler directory; give --server-trace-dir to collect and analyse them");
    else
      collect_and_analyse_traces(run, run.workspace / "torch_trace", opts.server_trace_dir, 2.0);
  } else {
    run_orchestrated(run, deadline);
  }
  write_client_files(run);
  if (run.client) {
    const serving_metrics& m = run.client->metrics;
    if (m.completed == 0) run.errors.push_back("no request completed" + (run.client->records.empty() ? std::string() : ": " + run.client->records.front().error));
    else if (m.failed > 0) {
      std::string first;
      for (const auto& r : run.client->records)
        if (!r.success) { first = r.error; break; }
      run.warnings.push_back(strprintf("%zu of %zu requests failed; first error: %s", m.failed, m.num_requests, first.c_str()));
    }
  }
  run.success = run.client.has_value() && run.client->metrics.completed > 0 && run.errors.empty();
  run.execution_time_s = monotonic_seconds() - start;
  MAGPIE_RETURN_IF_ERROR(write_reports(make_benchmark_report(run)));
  if (std::string why = interrupted(); !why.empty()) {  // the store records it as interrupted (INCOMPLETE)
    (void)mark_incomplete(run.workspace, why, signal_capture::last_signal());
    MAGPIE_LOG_ERROR("%s: the benchmark did not finish; workspace %s is marked INCOMPLETE (partial reports kept)",
                     why.c_str(), run.workspace.c_str());
  }
  return run;
}

}  // namespace magpie::serve
