#include "serve/report_printer.h"

#include <cctype>

#include "core/states.h"
#include "core/strings.h"
#include "magpie_generated/version.h"
#include "serve/bench_config_codec.h"
#include "serve/metrics.h"
#include "serve/metrics_printer.h"
#include "trace/gap_printer.h"
#include "trace/report_printer.h"

namespace magpie::serve {

namespace {

std::string to_upper_ascii(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

json or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json provenance_json(const report_provenance& p) {
  json j;
  j["input_config_sha256"] = or_null(p.input_config_sha256);
  j["config_path"] = or_null(p.config_path);
  j["magpie_version"] = MAGPIE_VERSION;
  j["magpie_git_commit"] = MAGPIE_GIT_COMMIT;
  j["magpie_command"] = p.magpie_command;
  j["model"] = p.model;
  j["model_revision"] = or_null(p.model_revision);
  j["framework"] = p.framework;
  j["precision"] = p.precision;
  j["run_mode"] = p.run_mode ? json(*p.run_mode) : json("external");
  j["image"] = p.image;
  json env = json::object();
  for (const auto& [k, v] : p.envs) env[k] = v;
  j["envs"] = env;
  j["gpu_assignment"] = p.gpu_assignment;
  j["host"] = p.host;
  j["started_at"] = p.started_at;
  j["effective_config"] = benchmark_config_json(p.effective_config);
  return j;
}

json serving_json(const serving_block& b) {
  json s;
  const serving_metrics& m = b.metrics;
  s["served_model"] = b.served_model;
  s["requested"] = {{"request_rate", b.request_rate > 0 ? json(b.request_rate) : json("inf")},
                    {"burstiness", b.burstiness},
                    {"max_concurrency", b.max_concurrency},
                    {"num_prompts", b.num_prompts}};
  s["achieved"] = {{"request_rate", m.achieved_request_rate}, {"scheduled_request_rate", m.scheduled_request_rate},
                   {"max_concurrent_requests", m.max_concurrent_requests}, {"mean_concurrency", m.mean_concurrency}};
  s["goodput"] = {{"slo_ms", b.goodput_slo_ms}, {"good_requests", m.good_requests},
                  {"request_goodput", m.request_goodput}};
  s["tokens"] = {{"input_source", m.input_tokens_source}, {"output_source", m.output_tokens_source},
                 {"role_only_chunks", m.role_only_chunks}, {"coalesced_events", m.coalesced_events},
                 {"requests_with_token_deltas", m.requests_with_token_deltas}};
  s["client"] = {{"timestamp_source", m.timestamp_source}, {"reads", b.load.reads},
                 {"kernel_stamped_reads", b.load.kernel_stamped_reads},
                 {"schedule_slip_p50_ms", m.schedule_slip.at(50)}, {"schedule_slip_p99_ms", m.schedule_slip.at(99)},
                 {"read_lag_p50_ms", m.read_lag.at(50)}, {"read_lag_p99_ms", m.read_lag.at(99)}};
  s["warmup_requests"] = b.warmup_requests;
  s["aborted"] = or_null(b.aborted);
  s["metric_definitions"] = metric_definitions();
  return s;
}

}  // namespace

json benchmark_report_json(const benchmark_report& r) {
  json j;
  j["success"] = r.success;
  j["framework"] = r.framework;
  j["model"] = r.model;
  j["throughput"] = r.metrics ? magpie_throughput_json(*r.metrics) : json(nullptr);
  j["latency"] = r.metrics ? magpie_latency_json(*r.metrics) : json(nullptr);
  j["kernel_summary"] = r.kernel_summary;
  j["top_bottlenecks"] = r.top_bottlenecks;
  j["tracelens_analysis"] = r.tracelens_analysis ? trace::inference_result_json(*r.tracelens_analysis) : json(nullptr);
  j["gap_analysis"] = r.gap_analysis ? trace::gap_block_json(*r.gap_analysis) : json(nullptr);
  j["targeted_trace"] = nullptr;
  j["gpu_monitor"] = nullptr;
  j["workspace_dir"] = r.workspace.string();
  j["execution_time"] = r.execution_time_s;
  j["profiling_enabled"] = r.profiling_enabled;
  j["run_kind"] = r.run_kind;
  j["reward_eligible"] = r.reward_eligible;
  j["errors"] = r.errors;
  j["warnings"] = r.warnings;
  j["serving"] = r.serving ? serving_json(*r.serving) : json(nullptr);
  if (r.profile_pass) j["profile_pass"] = {{"requests", r.profile_pass->requests},
                                            {"completed", r.profile_pass->metrics.completed},
                                            {"throughput", magpie_throughput_json(r.profile_pass->metrics)}};
  j["server"] = r.server;
  j["provenance"] = provenance_json(r.provenance);
  json files = json::object();
  for (const auto& [k, v] : r.files) files[k] = v;
  j["files"] = files;
  return j;
}

std::string summary_text(const benchmark_report& r) {
  std::string bar(60, '=');
  std::string s = bar + "\n";
  s += "Benchmark Result: " + to_upper_ascii(r.framework.empty() ? "openai" : r.framework) + "\n";
  s += bar + "\n";
  s += "Model: " + (r.serving ? r.serving->served_model : r.provenance.model) + "\n";
  s += std::string("Status: ") + stage_state_name(r.success ? stage_state::success : stage_state::failed) + "\n";
  s += std::string("Run kind: ") + run_kind_name(r.run_kind) + "\n";
  s += std::string("Reward eligible: ") + (r.reward_eligible ? "True" : "False") + "\n";
  if (r.serving) {
    const serving_metrics& m = r.serving->metrics;
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
  if (!r.top_bottlenecks.empty()) {
    s += "\nTop bottleneck kernels:\n";
    for (size_t i = 0; i < r.kernel_summary.size() && i < 5; ++i) {
      const json& k = r.kernel_summary[i];
      s += strprintf("  %zu. %s - %.1f%% (%.3f ms, %lld calls)\n", i + 1, json_string(k, "name").c_str(),
                     json_number(k, "percent", 0), json_number(k, "time_ms", 0), static_cast<long long>(json_number(k, "calls", 0)));
    }
  }
  if (r.gap_analysis) {
    const trace::gap_result& g = r.gap_analysis->result;
    s += strprintf("\nGap analysis (%.1f%%-%.1f%% window):\n", g.cfg.trace_start_pct, g.cfg.trace_end_pct);
    for (size_t i = 0; i < g.merged.size() && i < 5; ++i) {
      const trace::kernel_stat& k = g.merged[i];
      s += strprintf("  %s - %.1f%% (%.1f us, %lld calls)\n", k.name.c_str(), g.total_us > 0 ? k.total_us / g.total_us * 100.0 : 0.0,
                     k.total_us, static_cast<long long>(k.calls));
    }
  }
  if (!r.errors.empty()) {
    s += "\nErrors:\n";
    for (const auto& e : r.errors) s += "  - " + e + "\n";
  }
  if (r.own_warnings > 0) {
    s += "\nWarnings:\n";
    for (size_t i = 0; i < r.own_warnings && i < r.warnings.size(); ++i) s += "  - " + r.warnings[i] + "\n";
  }
  s += "\nWorkspace: " + r.workspace.string() + "\n";
  s += strprintf("Execution time: %.1f s\n", r.execution_time_s);
  s += bar + "\n";
  return s;
}

}  // namespace magpie::serve
