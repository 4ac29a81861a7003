#include "serve/report.h"

#include <unistd.h>

#include <cctype>

#include "core/states.h"
#include "core/strings.h"
#include "magpie_generated/version.h"
#include "serve/launcher.h"
#include "trace/gap_printer.h"
#include "trace/report_printer.h"

namespace magpie::serve {

namespace {

std::string to_upper_ascii(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

json provenance(const benchmark_run& run) {
  const benchmark_config& c = run.cfg;
  json p;
  p["input_config_sha256"] = c.input_config_sha256.empty() ? json(nullptr) : json(c.input_config_sha256);
  p["config_path"] = c.config_path.empty() ? json(nullptr) : json(c.config_path);
  p["magpie_version"] = MAGPIE_VERSION;
  p["magpie_git_commit"] = MAGPIE_GIT_COMMIT;
  p["magpie_command"] = run.magpie_argv;
  p["model"] = c.model;
  p["model_revision"] = c.model_revision.empty() ? json(nullptr) : json(c.model_revision);
  p["framework"] = c.framework_name();
  p["precision"] = c.precision;
  p["run_mode"] = c.base_url.empty() ? json(c.run_mode) : json("external");
  p["image"] = run.server.is_object() && run.server.contains("image") ? run.server["image"] : json(nullptr);
  json env = json::object();
  for (const auto& [k, v] : c.envs) env[k] = is_secret_env(k) ? "<redacted>" : v;
  p["envs"] = env;
  p["gpu_assignment"] = run.gpu_assignment;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  p["host"] = host;
  p["started_at"] = run.started_at;
  p["effective_config"] = c.to_json();
  return p;
}

json serving_block(const client_result& r, const benchmark_config& c) {
  json s;
  const serving_metrics& m = r.metrics;
  s["served_model"] = r.model;
  s["requested"] = {{"request_rate", c.client.request_rate > 0 ? json(c.client.request_rate) : json("inf")},
                    {"burstiness", c.client.burstiness},
                    {"max_concurrency", r.vllm_json["max_concurrency"]},
                    {"num_prompts", r.records.size()}};
  s["achieved"] = {{"request_rate", m.achieved_request_rate}, {"scheduled_request_rate", m.scheduled_request_rate},
                   {"max_concurrent_requests", m.max_concurrent_requests}, {"mean_concurrency", m.mean_concurrency}};
  s["goodput"] = {{"slo_ms", r.vllm_json["goodput_config"]}, {"good_requests", m.good_requests},
                  {"request_goodput", m.request_goodput}};
  s["tokens"] = {{"input_source", m.input_tokens_source}, {"output_source", m.output_tokens_source},
                 {"role_only_chunks", m.role_only_chunks}, {"coalesced_events", m.coalesced_events},
                 {"requests_with_token_deltas", m.requests_with_token_deltas}};
  s["client"] = {{"timestamp_source", m.timestamp_source}, {"reads", r.load.reads},
                 {"kernel_stamped_reads", r.load.kernel_stamped_reads},
                 {"schedule_slip_p50_ms", m.schedule_slip.at(50)}, {"schedule_slip_p99_ms", m.schedule_slip.at(99)},
                 {"read_lag_p50_ms", m.read_lag.at(50)}, {"read_lag_p99_ms", m.read_lag.at(99)}};
  s["warmup_requests"] = r.warmups.size();
  s["aborted"] = r.aborted.empty() ? json(nullptr) : json(r.aborted);
  s["metric_definitions"] = metric_definitions();
  return s;
}

}  // namespace

json benchmark_report_json(const benchmark_run& run) {
  const benchmark_config& c = run.cfg;
  json j;
  j["success"] = run.success;
  j["framework"] = c.framework_name();
  j["model"] = run.client ? json(c.model.empty() ? run.client->model : c.model) : json(c.model);
  if (run.client) {
    j["throughput"] = magpie_throughput_json(run.client->metrics);
    j["latency"] = magpie_latency_json(run.client->metrics);
  } else {
    j["throughput"] = nullptr;
    j["latency"] = nullptr;
  }
  j["kernel_summary"] = run.traces.kernel_summary;
  j["top_bottlenecks"] = run.traces.top_bottlenecks;
  j["tracelens_analysis"] =
      run.traces.tracelens_analysis ? trace::inference_result_json(*run.traces.tracelens_analysis) : json(nullptr);
  j["gap_analysis"] = run.traces.gap_analysis ? trace::gap_block_json(*run.traces.gap_analysis) : json(nullptr);
  j["targeted_trace"] = nullptr;
  j["gpu_monitor"] = nullptr;
  j["workspace_dir"] = run.workspace.string();
  j["execution_time"] = run.execution_time_s;
  j["profiling_enabled"] = c.profiler.torch_profiler;
  j["run_kind"] = c.effective_run_kind();
  // A failed or interrupted run is never reward-eligible, whatever its run kind.
  j["reward_eligible"] = run.success && c.effective_run_kind() == run_kind::measurement;
  std::vector<std::string> errors = run.errors, warnings = run.warnings;
  errors.insert(errors.end(), run.traces.errors.begin(), run.traces.errors.end());
  warnings.insert(warnings.end(), run.traces.warnings.begin(), run.traces.warnings.end());
  j["errors"] = errors;
  j["warnings"] = warnings;
  j["serving"] = run.client ? serving_block(*run.client, c) : json(nullptr);
  if (run.profile_pass) j["profile_pass"] = {{"requests", run.profile_pass->records.size()},
                                              {"completed", run.profile_pass->metrics.completed},
                                              {"throughput", magpie_throughput_json(run.profile_pass->metrics)}};
  j["server"] = run.server;
  j["provenance"] = provenance(run);
  json files = json::object();
  for (const auto& [k, v] : run.files) files[k] = v;
  j["files"] = files;
  return j;
}

std::string summary_text(const benchmark_run& run) {
  const benchmark_config& c = run.cfg;
  std::string bar(60, '=');
  std::string s = bar + "\n";
  s += "Benchmark Result: " + to_upper_ascii(c.framework ? c.framework_name() : "openai") + "\n";
  s += bar + "\n";
  s += "Model: " + (run.client ? run.client->model : c.model) + "\n";
  s += std::string("Status: ") + stage_state_name(run.success ? stage_state::success : stage_state::failed) + "\n";
  s += std::string("Run kind: ") + run_kind_name(c.effective_run_kind()) + "\n";
  s += std::string("Reward eligible: ") + (run.success && c.effective_run_kind() == run_kind::measurement ? "True" : "False") + "\n";
  if (run.client) {
    const serving_metrics& m = run.client->metrics;
    s += "\nThroughput:\n";
    s += strprintf("  Request throughput: %.2f req/s\n", m.request_throughput);
    s += strprintf("  Output throughput: %.2f tok/s\n", m.output_throughput);
    s += strprintf("  Total token throughput: %.2f tok/s\n", m.total_token_throughput);
    s += strprintf("  Completed requests: %zu (failed %zu)\n", m.completed, m.failed);
    s += strprintf("  Duration: %.2f s\n", m.duration_s);
    s += strprintf("  Concurrency: max %lld, mean %.2f; achieved request rate %.2f req/s\n",
                   static_cast<long long>(m.max_concurrent_requests), m.mean_concurrency, m.achieved_request_rate);
    s += "\nLatency (ms):\n";
    auto line = [&](const char* name, const distribution& d) {
      s += strprintf("  %-5s mean %9.2f  median %9.2f  p99 %9.2f\n", name, d.mean, d.median, d.at(99));
    };
    line("TTFT", m.ttft);
    line("TPOT", m.tpot);
    line("ITL", m.itl);
    line("E2EL", m.e2el);
    line("Queue", m.queue_time);
    s += strprintf("\nClient: schedule slip p50 %.3f / p99 %.3f ms; read lag p50 %.3f / p99 %.3f ms (%s timestamps)\n",
                   m.schedule_slip.at(50), m.schedule_slip.at(99), m.read_lag.at(50), m.read_lag.at(99),
                   m.timestamp_source.empty() ? "no" : m.timestamp_source.c_str());
  }
  if (!run.traces.top_bottlenecks.empty()) {
    s += "\nTop bottleneck kernels:\n";
    for (size_t i = 0; i < run.traces.kernel_summary.size() && i < 5; ++i) {
      const json& k = run.traces.kernel_summary[i];
      s += strprintf("  %zu. %s - %.1f%% (%.3f ms, %lld calls)\n", i + 1, json_string(k, "name").c_str(),
                     json_number(k, "percent", 0), json_number(k, "time_ms", 0), static_cast<long long>(json_number(k, "calls", 0)));
    }
  }
  if (run.traces.gap_analysis) {
    const trace::gap_result& g = run.traces.gap_analysis->result;
    s += strprintf("\nGap analysis (%.1f%%-%.1f%% window):\n", g.cfg.trace_start_pct, g.cfg.trace_end_pct);
    for (size_t i = 0; i < g.merged.size() && i < 5; ++i) {
      const trace::kernel_stat& k = g.merged[i];
      s += strprintf("  %s - %.1f%% (%.1f us, %lld calls)\n", k.name.c_str(), g.total_us > 0 ? k.total_us / g.total_us * 100.0 : 0.0,
                     k.total_us, static_cast<long long>(k.calls));
    }
  }
  std::vector<std::string> errors = run.errors;
  errors.insert(errors.end(), run.traces.errors.begin(), run.traces.errors.end());
  if (!errors.empty()) {
    s += "\nErrors:\n";
    for (const auto& e : errors) s += "  - " + e + "\n";
  }
  if (!run.warnings.empty()) {
    s += "\nWarnings:\n";
    for (const auto& w : run.warnings) s += "  - " + w + "\n";
  }
  s += "\nWorkspace: " + run.workspace.string() + "\n";
  s += strprintf("Execution time: %.1f s\n", run.execution_time_s);
  s += bar + "\n";
  return s;
}

status write_reports(const benchmark_run& run) {
  MAGPIE_RETURN_IF_ERROR(write_json_file(run.workspace / "benchmark_report.json", benchmark_report_json(run)));
  return write_file_atomic(run.workspace / "summary.txt", summary_text(run));
}

}  // namespace magpie::serve
