// The serving benchmark's report as data (serve/report.h) and its printers
// (serve/report_printer.h): every decision is made once in make_benchmark_report, the printers
// only format it, and benchmark_report.json keeps upstream Magpie's keys.
#include <gtest/gtest.h>

#include "serve/report.h"
#include "serve/report_printer.h"

namespace magpie::serve {
namespace {

benchmark_run failed_measurement_run() {
  benchmark_run run;
  run.cfg.framework = serving_framework::sglang;
  run.cfg.model = "m";
  run.cfg.run_kind = run_kind::measurement;
  run.cfg.set_env("HF_TOKEN", "hf_secret");
  run.cfg.set_env("TP", "2");
  run.workspace = "/w/benchmark_sglang";
  run.success = false;
  run.errors = {"server died"};
  run.warnings = {"slow start"};
  run.traces.errors = {"trace unreadable"};
  run.traces.warnings = {"no rank 1 trace"};
  run.client = client_result{};
  run.client->model = "served-m";
  run.client->metrics.failed = 2;
  request_record ok, bad;
  ok.success = true;
  bad.success = false;
  bad.error = "HTTP 500";
  run.client->records = {ok, bad, bad};
  return run;
}

TEST(benchmark_report, decisions_are_made_once_from_the_run) {
  benchmark_report r = make_benchmark_report(failed_measurement_run());
  EXPECT_EQ(r.framework, "sglang");
  EXPECT_EQ(r.model, "m");  // the configured model wins over the served one
  EXPECT_EQ(r.run_kind, run_kind::measurement);
  EXPECT_FALSE(r.reward_eligible);  // a failed run never is
  EXPECT_EQ(r.errors, (std::vector<std::string>{"server died", "trace unreadable"}));
  EXPECT_EQ(r.warnings, (std::vector<std::string>{"slow start", "no rank 1 trace"}));
  EXPECT_EQ(r.own_warnings, 1u);
  ASSERT_TRUE(r.serving.has_value());
  EXPECT_EQ(r.serving->served_model, "served-m");
  EXPECT_EQ(r.serving->num_prompts, 3u);
  EXPECT_EQ(r.serving->first_error, "HTTP 500");
  // file order (benchmark_report.json keeps it), secrets redacted
  EXPECT_EQ(r.provenance.envs, (std::vector<std::pair<std::string, std::string>>{{"HF_TOKEN", "<redacted>"}, {"TP", "2"}}));
  EXPECT_EQ(r.provenance.run_mode, server_run_mode::docker);
}

TEST(benchmark_report, a_base_url_run_is_external_and_a_successful_measurement_is_reward_eligible) {
  benchmark_run run = failed_measurement_run();
  run.success = true;
  run.cfg.base_url = "http://127.0.0.1:8000";
  run.cfg.model.clear();
  benchmark_report r = make_benchmark_report(run);
  EXPECT_TRUE(r.reward_eligible);
  EXPECT_EQ(r.model, "served-m");
  EXPECT_FALSE(r.provenance.run_mode.has_value());
  json j = benchmark_report_json(r);
  EXPECT_EQ(j["provenance"]["run_mode"], "external");
  EXPECT_EQ(j["model"], "served-m");
  EXPECT_EQ(j["reward_eligible"], true);
}

TEST(benchmark_report, the_json_printer_keeps_upstream_keys) {
  benchmark_report r = make_benchmark_report(failed_measurement_run());
  json j = benchmark_report_json(r);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"errors", "execution_time", "files", "framework", "gap_analysis",
                                            "gpu_monitor", "kernel_summary", "latency", "model", "profiling_enabled",
                                            "provenance", "reward_eligible", "run_kind", "server", "serving",
                                            "success", "targeted_trace", "throughput", "top_bottlenecks",
                                            "tracelens_analysis", "warnings", "workspace_dir"}));
  EXPECT_EQ(j["run_kind"], "measurement");
  EXPECT_EQ(j["errors"], json({"server died", "trace unreadable"}));
  EXPECT_EQ(j["warnings"], json({"slow start", "no rank 1 trace"}));
  EXPECT_EQ(j["serving"]["requested"]["request_rate"], "inf");
  EXPECT_EQ(j["serving"]["requested"]["num_prompts"], 3);
  EXPECT_EQ(j["serving"]["aborted"], nullptr);
  EXPECT_FALSE(j["serving"].contains("first_error"));
  EXPECT_EQ(j["provenance"]["envs"]["HF_TOKEN"], "<redacted>");
  EXPECT_EQ(j["provenance"]["model_revision"], nullptr);
  EXPECT_EQ(j["provenance"]["run_mode"], "docker");
  EXPECT_FALSE(j.contains("profile_pass"));
}

TEST(benchmark_report, summary_lists_every_error_but_only_the_runs_own_warnings) {
  std::string s = summary_text(make_benchmark_report(failed_measurement_run()));
  EXPECT_NE(s.find("Benchmark Result: SGLANG\n"), std::string::npos);
  EXPECT_NE(s.find("Model: served-m\n"), std::string::npos);
  EXPECT_NE(s.find("Status: FAILED\n"), std::string::npos);
  EXPECT_NE(s.find("Reward eligible: False\n"), std::string::npos);
  EXPECT_NE(s.find("  - server died\n  - trace unreadable\n"), std::string::npos);
  EXPECT_NE(s.find("\nWarnings:\n  - slow start\n\nWorkspace: /w/benchmark_sglang\n"), std::string::npos);
  EXPECT_EQ(s.find("no rank 1 trace"), std::string::npos);
}

}  // namespace
}  // namespace magpie::serve
