// variant_server and run_benchmark (see measure.h).
#include "optimize/measure.h"

#include <algorithm>

#include "core/log.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "optimize/decide_codec.h"
#include "optimize/server_info_codec.h"
#include "serve/bench_config_codec.h"
#include "serve/http_client.h"
#include "serve/orchestrator.h"

namespace magpie::optimize {

namespace {

std::vector<std::pair<std::string, std::string>> placeholder_vars(const optimize_config& cfg, const server_env& env,
                                                                  const std::string& variant, int port) {
  return {{"variant", variant},         {"port", std::to_string(port)}, {"trace_dir", env.trace_dir.string()},
          {"config_dir", cfg.dir.string()}, {"python", env.python},       {"out", env.workspace.string()},
          {"concurrency", std::to_string(cfg.workload.concurrency())}};
}

}  // namespace

status_or<std::unique_ptr<variant_server>> variant_server::spawn(const optimize_config& cfg, const server_env& env,
                                                                 const std::string& tag, const std::string& variant,
                                                                 int port) {
  std::unique_ptr<variant_server> s(new variant_server());
  s->m_tag = tag;
  s->m_variant = variant;
  s->m_info_path = cfg.server.info_path;
  auto vars = placeholder_vars(cfg, env, variant, port);
  for (const auto& a : cfg.server.command) {
    MAGPIE_ASSIGN_OR_RETURN(std::string x, expand_placeholders(a, vars));
    s->m_plan.server_argv.push_back(x);
  }
  s->m_plan.argv = s->m_plan.server_argv;
  for (const auto& [k, v] : cfg.server.env) {
    MAGPIE_ASSIGN_OR_RETURN(std::string x, expand_placeholders(v, vars));
    s->m_plan.env.emplace_back(k, x);
  }
  s->m_plan.env.emplace_back("PYTHONUNBUFFERED", "1");
  s->m_plan.stop_grace_s = cfg.server.stop_grace_s;
  s->m_plan.server_trace_dir = env.trace_dir.string();
  s->m_plan.host_trace_dir = env.trace_dir;
  s->m_plan.profiler_args = serve::profiler_delivery::none;
  s->m_plan.url.port = static_cast<uint16_t>(port);
  s->m_log = env.workspace / "logs" / ("server_" + tag + ".log");
  (void)make_dirs(s->m_log.parent_path());
  (void)make_dirs(env.trace_dir);
  MAGPIE_LOG_INFO("starting the %s server (variant %s) on port %d", tag.c_str(), variant.c_str(), port);
  s->m_started = monotonic_seconds();
  auto proc = serve::server_process::start(s->m_plan, s->m_log);
  if (!proc.ok()) return error(proc.get_status().code(), "server_failed: %s", proc.get_status().message().c_str());
  s->m_proc = std::move(*proc);
  return s;
}

variant_server::~variant_server() { stop(); }

status variant_server::wait_ready(double timeout_s) {
  status st = m_proc->wait_ready(timeout_s, [] { return interrupted(); });
  if (!st.ok()) return error(st.code(), "server_failed: the %s server (variant %s, log %s): %s", m_tag.c_str(),
                             m_variant.c_str(), m_log.c_str(), st.message().c_str());
  m_ready_s = monotonic_seconds() - m_started;
  if (m_info_path.empty()) return ok_status();
  auto r = serve::http_call(m_plan.url, "GET", m_info_path, "", 10.0);
  if (!r.ok() || r->status != 200)
    return error(status_code::unavailable, "server_failed: GET %s on the %s server: %s", m_info_path.c_str(), m_tag.c_str(),
                 r.ok() ? strprintf("HTTP %d", r->status).c_str() : r.get_status().message().c_str());
  auto j = parse_json(r->body, m_info_path);
  if (!j.ok() || !j->is_object())
    return error(status_code::unavailable, "server_failed: %s of the %s server is not a JSON object", m_info_path.c_str(), m_tag.c_str());
  m_info.document = std::move(*j);
  return ok_status();
}

void variant_server::stop() {
  if (m_proc) {
    m_exit = m_proc->stop();
    m_proc.reset();
  }
}

namespace {

run_metrics metrics_of(const serve::serving_metrics& m) {
  run_metrics r = {{"output_throughput", m.output_throughput}, {"request_throughput", m.request_throughput},
                   {"total_token_throughput", m.total_token_throughput}, {"completed", static_cast<double>(m.completed)},
                   {"failed", static_cast<double>(m.failed)}, {"duration_s", m.duration_s}};
  auto put = [&](const char* k, const serve::distribution& d, bool median) {
    if (d.n > 0) r[k] = median ? d.median : d.mean;
  };
  put("tpot_mean_ms", m.tpot, false);
  put("tpot_median_ms", m.tpot, true);
  put("ttft_mean_ms", m.ttft, false);
  put("itl_mean_ms", m.itl, false);
  put("e2el_mean_ms", m.e2el, false);
  return r;
}

/// The part of a benchmark config that defines the workload (not where results go, how it is
/// profiled, or which URL the server had).
json workload_of(const serve::benchmark_config& c) {
  json full = serve::benchmark_config_json(c);
  json w = json::object();
  for (const char* k : {"client", "envs", "model", "precision"})
    if (full.contains(k)) w[k] = full[k];
  return w;
}

std::vector<std::string> equivalent_cli(const serve::benchmark_config& c, const std::string& url, const fs::path& out,
                                        bool profile, const fs::path& trace_dir) {
  const auto& s = c.client;
  std::vector<std::string> a = {"magpie", "benchmark", "--base-url", url, "--dataset-name", s.dataset_name,
                                "--num-prompts", std::to_string(s.num_prompts), "--seed", std::to_string(s.seed),
                                "--output-dir", out.string()};
  if (s.random_input_len > 0) a.insert(a.end(), {"--random-input-len", std::to_string(s.random_input_len)});
  if (s.random_output_len > 0) a.insert(a.end(), {"--random-output-len", std::to_string(s.random_output_len)});
  if (s.random_range_ratio) a.insert(a.end(), {"--random-range-ratio", strprintf("%g", *s.random_range_ratio)});
  if (s.max_concurrency > 0) a.insert(a.end(), {"--max-concurrency", std::to_string(s.max_concurrency)});
  a.insert(a.end(), {"--request-rate", s.request_rate > 0 ? strprintf("%g", s.request_rate) : "inf"});
  if (s.ignore_eos) a.push_back("--ignore-eos");
  if (profile) a.insert(a.end(), {"--torch-profiler", "--server-trace-dir", trace_dir.string()});
  return a;
}

}  // namespace

status_or<bench_result> run_benchmark(const optimize_config& cfg, const server_env& env, command_runner& cmds,
                                      const bench_request& req) {
  if (std::string why = interrupted(); !why.empty()) return error(status_code::cancelled, "benchmark_failed: %s", why.c_str());
  serve::benchmark_config c = cfg.workload.bench;
  c.base_url = req.server->url();
  c.client.num_prompts = req.num_prompts;
  c.profiler.torch_profiler = req.profile;
  c.profiler.profile_prompts = 0;
  c.run_kind = req.profile ? serve::run_kind::diagnostic : serve::run_kind::measurement;
  serve::run_options o;
  o.output_dir = req.out_dir;
  o.server_trace_dir = req.profile ? env.trace_dir.string() : std::string();
  o.magpie_argv = equivalent_cli(c, c.base_url, req.out_dir, req.profile, env.trace_dir);
  (void)make_dirs(req.out_dir);
  double t0 = monotonic_seconds();
  MAGPIE_LOG_INFO("%s: %lld prompts against %s (%s)", req.name.c_str(), static_cast<long long>(req.num_prompts),
                  c.base_url.c_str(), req.server->tag().c_str());
  auto run = serve::run_benchmark(c, o);
  double secs = monotonic_seconds() - t0;
  int rc = run.ok() && run->success ? 0 : 1;
  cmds.record(req.name, o.magpie_argv, secs, rc, run.ok() ? (run->workspace / "summary.txt").string() : std::string());
  if (!run.ok()) return error(run.get_status().code(), "benchmark_failed: %s: %s", req.name.c_str(), run.get_status().message().c_str());
  if (!run->success || !run->client)
    return error(status_code::failed_precondition, "benchmark_failed: %s (workspace %s): %s", req.name.c_str(),
                 run->workspace.c_str(), join(run->errors, "; ").substr(0, 800).c_str());
  bench_result r;
  r.workspace = run->workspace;
  r.url = c.base_url;
  r.server_tag = req.server->tag();
  r.metrics = metrics_of(run->client->metrics);
  std::vector<const serve::request_record*> recs;
  for (const auto& x : run->client->records)
    if (!x.warmup) recs.push_back(&x);
  std::sort(recs.begin(), recs.end(), [](const auto* a, const auto* b) { return a->index < b->index; });
  json lens = json::array();
  for (const auto* x : recs) lens.push_back({x->prompt_len, x->max_tokens});
  r.config_for_hash = workload_of(c);
  r.fp = make_fingerprint(r.config_for_hash, lens, identity_document(req.server->info(), cfg.server.identity_keys));
  return r;
}

}  // namespace magpie::optimize
