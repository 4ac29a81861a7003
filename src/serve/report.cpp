#include "serve/report.h"

#include <unistd.h>

#include "core/fs.h"
#include "serve/launcher.h"
#include "serve/report_printer.h"

namespace magpie::serve {

namespace {

report_provenance provenance(const benchmark_run& run) {
  const benchmark_config& c = run.cfg;
  report_provenance p;
  p.input_config_sha256 = c.input_config_sha256;
  p.config_path = c.config_path;
  p.magpie_command = run.magpie_argv;
  p.model = c.model;
  p.model_revision = c.model_revision;
  p.framework = c.framework_name();
  p.precision = c.precision;
  if (c.base_url.empty()) p.run_mode = c.run_mode;
  if (run.server.is_object() && run.server.contains("image")) p.image = run.server["image"];
  for (const auto& [k, v] : c.envs) p.envs.emplace_back(k, is_secret_env(k) ? "<redacted>" : v);
  p.gpu_assignment = run.gpu_assignment;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  p.host = host;
  p.started_at = run.started_at;
  p.effective_config = c;
  return p;
}

serving_block serving(const client_result& r, const benchmark_config& c) {
  serving_block s;
  s.served_model = r.model;
  s.request_rate = c.client.request_rate;
  s.burstiness = c.client.burstiness;
  if (r.vllm_json.is_object()) {
    s.max_concurrency = r.vllm_json.value("max_concurrency", json(nullptr));
    s.goodput_slo_ms = r.vllm_json.value("goodput_config", json(nullptr));
  }
  s.num_prompts = r.records.size();
  s.metrics = r.metrics;
  s.load = r.load;
  s.warmup_requests = r.warmups.size();
  s.aborted = r.aborted;
  for (const auto& rec : r.records)
    if (!rec.success) {
      s.first_error = rec.error;
      break;
    }
  return s;
}

}  // namespace

benchmark_report make_benchmark_report(const benchmark_run& run) {
  const benchmark_config& c = run.cfg;
  benchmark_report r;
  r.success = run.success;
  r.framework = c.framework_name();
  r.model = run.client && c.model.empty() ? run.client->model : c.model;
  if (run.client) r.metrics = run.client->metrics;
  r.kernel_summary = run.traces.kernel_summary;
  r.top_bottlenecks = run.traces.top_bottlenecks;
  r.tracelens_analysis = run.traces.tracelens_analysis;
  r.gap_analysis = run.traces.gap_analysis;
  r.workspace = run.workspace;
  r.execution_time_s = run.execution_time_s;
  r.profiling_enabled = c.profiler.torch_profiler;
  r.run_kind = c.effective_run_kind();
  // A failed or interrupted run is never reward-eligible, whatever its run kind.
  r.reward_eligible = run.success && r.run_kind == run_kind::measurement;
  r.errors = run.errors;
  r.errors.insert(r.errors.end(), run.traces.errors.begin(), run.traces.errors.end());
  r.warnings = run.warnings;
  r.own_warnings = run.warnings.size();
  r.warnings.insert(r.warnings.end(), run.traces.warnings.begin(), run.traces.warnings.end());
  if (run.client) r.serving = serving(*run.client, c);
  if (run.profile_pass) r.profile_pass = profile_pass_block{run.profile_pass->records.size(), run.profile_pass->metrics};
  r.server = run.server;
  r.provenance = provenance(run);
  r.files = run.files;
  return r;
}

status write_reports(const benchmark_report& report) {
  MAGPIE_RETURN_IF_ERROR(write_json_file(report.workspace / "benchmark_report.json", benchmark_report_json(report)));
  return write_file_atomic(report.workspace / "summary.txt", summary_text(report));
}

}  // namespace magpie::serve
