// The output schemas of the analyze and benchmark_status tools come from the writers of the
// reports they return (kernel/eval_schema.h, serve/metrics_schema.h): what the tools build from
// a report that the real writers produced validates, and a key a writer adds without its
// schema does not (the schemas are closed objects).
#include <gtest/gtest.h>

#include "core/fs.h"
#include "kernel/eval_schema.h"
#include "kernel/evaluate.h"
#include "kernel/report_printer.h"
#include "mcp/run_registry.h"
#include "mcp/run_view_printer.h"
#include "core/json_schema.h"
#include "mcp/tool_protocol.h"
#include "mcp/benchmark_output_printer.h"
#include "mcp/kernel_output_printer.h"
#include "serve/metrics_printer.h"
#include "serve/metrics_schema.h"
#include "serve/report.h"

using namespace magpie;
using namespace magpie::mcp;
using namespace magpie::schema;

namespace {

kernel::kernel_eval evaluated_kernel(bool compiled) {
  kernel::kernel_eval k;
  k.spec.id = "vector_add";
  k.spec.type = kernel::kernel_type::host;
  k.compiling.state = compiled ? stage_state::success : stage_state::failed;
  if (!compiled) {
    k.compiling.errors.push_back("g++ exited 1");
    return k;
  }
  k.correctness.state = stage_state::success;
  k.basis = correctness_basis::outputs;
  k.correctness_info["seeds"] = {1, 2, 3};
  k.integrity.set("reference_inputs", kernel::check_status::pass, "inputs come from the reference");
  k.integrity.set("timed_outputs", kernel::check_status::warn, "2 of 3 checked", {{"checked", 2}});
  k.score = 0.5;
  return k;
}

serve::distribution dist(double base) {
  serve::distribution d;
  d.n = 4;
  d.mean = base;
  d.median = base;
  d.min = base / 2;
  d.max = base * 2;
  d.percentiles = {{50, base}, {99, base * 2}, {99.9, base * 3}};
  return d;
}

}  // namespace

TEST(report_schema, kernel_eval_json_matches_its_schema_and_closes_it) {
  kernel::eval_context ctx;
  for (bool compiled : {true, false}) {
    json entry = kernel::kernel_eval_json(evaluated_kernel(compiled), ctx);
    EXPECT_EQ(validate(kernel::kernel_eval_schema(), entry), "") << entry.dump();
  }
  json entry = kernel::kernel_eval_json(evaluated_kernel(true), ctx);
  entry["new_field"] = 1;  // written by kernel_eval_json but not in its schema
  EXPECT_NE(validate(kernel::kernel_eval_schema(), entry).find("unknown property 'new_field'"), std::string::npos);
  entry = kernel::kernel_eval_json(evaluated_kernel(true), ctx);
  entry["correctness_method"] = "auto";  // a policy word, not a basis
  EXPECT_NE(validate(kernel::kernel_eval_schema(), entry), "");
  entry = kernel::kernel_eval_json(evaluated_kernel(true), ctx);
  entry["integrity"]["checks"][0]["status"] = "ok";
  EXPECT_NE(validate(kernel::kernel_eval_schema(), entry), "");
}

TEST(report_schema, the_analyze_tool_result_validates_against_its_output_schema) {
  const tool_def* t = find_tool("analyze");
  ASSERT_NE(t, nullptr);
  kernel::eval_context ctx;
  for (bool compiled : {true, false}) {
    json entry = kernel::kernel_eval_json(evaluated_kernel(compiled), ctx);
    json out = analyze_output(entry, "/w/analyze_vector_add_1", "host", json::array({"a warning"}));
    EXPECT_EQ(validate(t->output_schema, out), "") << out.dump();
    EXPECT_EQ(out["kernel_type"], "host");
    EXPECT_EQ(out["kernel_id"], "vector_add");
  }
  json out = analyze_output(kernel::kernel_eval_json(evaluated_kernel(true), ctx), "/w", "host", json::array());
  out["outcome"] = "great";
  EXPECT_NE(validate(t->output_schema, out).find("/outcome"), std::string::npos);
}

TEST(report_schema, the_benchmark_status_result_validates_against_its_output_schema) {
  const tool_def* t = find_tool("benchmark_status");
  ASSERT_NE(t, nullptr);
  auto dir = make_temp_dir("/tmp", "magpie_report_schema_").value();
  scoped_dir cleanup(dir);
  serve::benchmark_run run;
  run.workspace = dir / "benchmark_vllm_20261203_120000";
  ASSERT_TRUE(fs::create_directories(run.workspace));
  run.cfg.framework = serve::serving_framework::vllm;
  run.success = true;
  run.client = serve::client_result{};
  serve::serving_metrics& m = run.client->metrics;
  m.completed = 4;
  m.request_throughput = 2.5;
  m.ttft = dist(10);
  m.tpot = dist(2);
  m.itl_read = dist(1);
  m.schedule_slip.mean = std::numeric_limits<double>::infinity();  // written as null
  run.client->vllm_json = serve::vllm_result_json(m, {}, 0, serve::metric_options{}, serve::run_info{});
  ASSERT_TRUE(serve::write_reports(serve::make_benchmark_report(run)).ok());
  run_result child;
  child.exit_code = 0;
  child.out = "Workspace: " + run.workspace.string() + "\n";
  std::string err;
  json result = finished_benchmark(dir, {}, child, &err);
  ASSERT_TRUE(result.is_object()) << err;
  EXPECT_EQ(err, "");
  run_view view;
  view.run_id = "r1";
  view.tool = "benchmark";
  view.state = run_state::succeeded;
  view.elapsed_s = 1.5;
  view.info = {{"framework", "vllm"}, {"output_dir", dir.string()}};
  view.log_tail = {"Workspace: " + run.workspace.string()};
  view.result = result;
  json status = run_view_json(view);  // what benchmark_status returns
  EXPECT_EQ(validate(t->output_schema, status), "") << result.dump();
  EXPECT_EQ(validate(t->output_schema, json{{"runs", {status}}}), "");
  json extra = status;
  extra["result"]["throughput"]["goodput_ratio"] = 0.5;  // a key the throughput writer does not have
  EXPECT_NE(validate(t->output_schema, extra).find("unknown property 'goodput_ratio'"), std::string::npos);
  extra = status;
  extra["result"]["latency"]["ttft"]["p99_ms"] = "slow";  // percentile keys are numbers
  EXPECT_NE(validate(t->output_schema, extra).find("/latency/ttft/p99_ms"), std::string::npos);
  EXPECT_EQ(validate(serve::magpie_latency_schema(), serve::magpie_latency_json(m)), "");
  EXPECT_EQ(validate(serve::magpie_throughput_schema(), serve::magpie_throughput_json(m)), "");
}
