// Every schema an MCP tool's output takes from a module is checked against that module's real
// writer here: kernel entries with every stage filled, scale-out merged reports (sched's merge
// code on rows kernel_eval_json wrote), the trace report and gap analysis of a real trace, the
// source-mapping report, a results-store comparison, the serving config, jobs rows. The schemas
// are closed, so a key added to a writer without its schema fails these tests.
#include <gtest/gtest.h>

#include "core/fs.h"
#include "core/stats.h"
#include "kernel/eval_schema.h"
#include "kernel/evaluate.h"
#include "kernel/harness_protocol.h"
#include "kernel/report_printer.h"
#include "core/json_schema.h"
#include "mcp/tool_protocol.h"
#include "mcp/kernel_output_printer.h"
#include "sched/batch.h"
#include "sched/merge.h"
#include "sched/report_schema.h"
#include "serve/bench_config.h"
#include "serve/bench_config_codec.h"
#include "source/kernel_sources.h"
#include "source/report_printer.h"
#include "store/compare.h"
#include "store/compare_printer.h"
#include "store/results_store.h"
#include "trace/api.h"
#include "trace/gap_config_codec.h"
#include "trace/gap_printer.h"
#include "trace/report_printer.h"
#include "trace/report_schema.h"

using namespace magpie;
using schema::validate;

namespace {

const std::string k_source = MAGPIE_TEST_SOURCE_DIR;

/// A host kernel after every stage, with what GPU runs add (CUPTI kernels, ncu, integrity data
/// of every shape) so that the whole entry is written.
kernel::kernel_eval full_kernel(const std::string& id) {
  kernel::kernel_eval k;
  k.spec.id = id;
  k.spec.type = kernel::kernel_type::cuda;
  k.spec.source_files = {"/src/" + id + ".cu"};
  k.spec.working_dir = "/src";
  k.spec.env = {{"A", "1"}};
  k.spec.compile_command = {{"nvcc", "-O3", id + ".cu"}};
  k.spec.testcase_command = {{"./" + id}};
  k.spec.target = kernel::bench_target{"mod", "Model", "get_inputs"};
  k.spec.entry = "Model";
  k.spec.inputs_from = "/src/inputs.py";
  k.compiling.state = stage_state::success;
  k.compiling.detail["commands"] = json::array({"nvcc -O3 " + id + ".cu"});
  k.compiling.detail["duration_s"] = 1.5;
  k.correctness.state = stage_state::success;
  k.basis = correctness_basis::outputs;
  k.correctness_info = {{"run_seed", 7}, {"seeds", {1, 2}}, {"output_dir", "/w/c"}, {"reference", "ref"},
                        {"harness", "magpie-bench 2"}, {"device", "H100"}, {"n_sizes", 2}, {"timed_size", 1},
                        {"sizes_checked", {0, 1}}, {"bound_to", {{"CUDA_VISIBLE_DEVICES", "1"}}}};
  kernel::correctness_verdict v;
  v.passed = true;
  kernel::trial_verdict t;
  t.index = 0;
  t.seed = 1;
  t.size = "1024";
  kernel::tensor_diff d;
  d.name = "c";
  d.dtype = "float32";
  d.shape = {1024};
  d.numel = 1024;
  d.first_bad = 3;
  t.outputs.push_back(d);
  v.trials.push_back(t);
  k.verdict = v;
  k.performance.state = stage_state::success;
  k.performance.detail["backend"] = "cupti";
  k.performance.detail["summary"] = {{"kernel_time_median", {{"value", 1.5}, {"unit", "us"}}}};
  json cupti_row = {{"kernel_name", "add"}, {"mangled_name", "_Z3addv"}, {"dispatch_count", 3},
                    {"duration_ns", {{"avg", 1.0}, {"min", 1.0}, {"max", 1.0}, {"total", 3.0}, {"median", 1.0}}},
                    {"grid", {1, 1, 1}}, {"block", {256, 1, 1}}};
  k.performance.detail["kernels"] = json::array({cupti_row});
  json ncu_row = {{"kernel_name", "_Z3addv"}, {"dispatch_count", 1},
                  {"duration_ns", {{"avg", 1.0}, {"min", 1.0}, {"max", 1.0}, {"total", 1.0}, {"median", 1.0}}},
                  {"metrics", {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", {{"value", 80.0}, {"unit", "%"}}}}}};
  k.performance.detail["ncu"] = {{"success", true}, {"errors", nullptr}, {"command", {"ncu ..."}}, {"backend", "ncu"},
                                 {"kernels", {ncu_row}}, {"state", "SUCCESS"},
                                 {"cross_check", {{{"kernel", "add"}, {"cupti_median_ns", 1.0}, {"ncu_median_ns", 1.0},
                                                   {"diff_pct", 0.0}}}}};
  kernel::timing_result tr;
  tr.ok = true;
  tr.source = kernel::timing_source::cupti;
  tr.stop_reason = "noise_target_met";
  tr.samples_ns = {1000, 1100, 1050};
  tr.stats = summarize(tr.samples_ns);
  tr.harness_stats = summarize(tr.samples_ns);
  tr.ready = kernel::parse_ready_line(R"({"protocol":2,"harness":"magpie-bench","timer":"cuda_events","cold":true})");
  kernel::cupti_kernel_row row;
  row.kernel_name = "add";
  row.mangled_name = "_Z3addv";
  row.dispatch_count = 3;
  row.avg_ns = row.min_ns = row.max_ns = row.median_ns = 1.0;
  row.total_ns = 3.0;
  row.grid[0] = row.grid[1] = row.grid[2] = 1;
  row.block[0] = 256;
  row.block[1] = row.block[2] = 1;
  tr.cupti_kernels = {row};
  tr.warnings = {"a warning"};
  kernel::process_result pr;
  pr.samples_ns = tr.samples_ns;
  tr.processes.push_back(pr);
  kernel::check_outcome co;
  co.failure = "probe 3 differs";
  tr.checks.push_back(co);
  k.timing = tr;
  k.integrity.set("reference_inputs", kernel::check_status::pass, "from the reference",
                  {{"module", "m.py"}, {"kernel_own_inputs_ignored", false}});
  k.integrity.set("processes", kernel::check_status::pass, "2 processes", {{"median_ns", std::vector<double>{1.0, 2.0}}});
  k.integrity.set("reference_outputs", kernel::check_status::pass, "held",
                  {{"reference", {{"id", "ref"}, {"trials", 2}}}, {"directory", "/w"}});
  k.integrity.set("clock_bracket", kernel::check_status::pass, "agrees",
                  std::vector<kernel::check_data>{{{"process", 0}, {"harness_median_ns", 1.0}, {"bracket_minus_rtt_ns", 2.0},
                                                   {"observed_ns", 1.0}, {"over_bracket", 0}}});
  k.score = 1.0;
  return k;
}

kernel::eval_context context() {
  kernel::eval_context ctx;
  ctx.req.mode = kernel::run_mode::compare;
  return ctx;
}

void expect_closed(const json& schema, json value, const char* where) {
  EXPECT_EQ(validate(schema, value), "") << where << ": " << value.dump().substr(0, 2000);
  value["a_key_the_writer_added"] = 1;
  EXPECT_NE(validate(schema, value), "") << where << ": the schema is not closed";
}

}  // namespace

TEST(writers_schema, a_fully_written_kernel_entry) {
  auto ctx = context();
  json entry = kernel::kernel_eval_json(full_kernel("add"), ctx);
  expect_closed(kernel::kernel_eval_schema(), entry, "kernel entry");
  expect_closed(kernel::kernel_spec_schema(), entry["kernel_config"], "kernel_config");
  json bad = entry;
  bad["timing"]["processes"][0]["new_counter"] = 1;
  EXPECT_NE(validate(kernel::kernel_eval_schema(), bad), "");
  bad = entry;
  bad["kernel_config"]["new_field"] = "x";
  EXPECT_NE(validate(kernel::kernel_eval_schema(), bad), "");
  const mcp::tool_def* t = mcp::find_tool("analyze");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(validate(t->output_schema, mcp::analyze_output(entry, "/w", "cuda", json::array())), "");
}

TEST(writers_schema, scale_out_merged_reports) {
  for (const char* mode : {"compare", "analyze"}) {
    kernel::eval_request req;
    req.mode = *kernel::parse_run_mode(mode);
    for (const char* id : {"base", "fast", "lost"}) req.kernels.push_back(full_kernel(id).spec);
    req.correctness.seed = 5;
    req.output_dir = make_temp_dir("/tmp", "magpie_writers_").value();
    scoped_dir cleanup(req.output_dir);
    auto b = sched::plan_kernel_batch(req, {});
    ASSERT_TRUE(b.ok()) << b.get_status().message();
    auto ctx = context();
    for (auto& j : b->jobs) {
      j.job_id = "1" + j.name;
      j.last.state = sched::job_state::completed;
      j.last.exit_status = 0;
      if (j.kernels.empty() || j.kernels[0] == 2) continue;  // "lost" writes nothing: a missing row
      json report = {{"run_seed", 5}, {"results", {kernel::kernel_eval_json(full_kernel(req.kernels[j.kernels[0]].id), ctx)}}};
      ASSERT_TRUE(write_json_file(j.dir / "report.json", report).ok());
      ASSERT_TRUE(write_json_file(j.dir / "result.json", {{"exit_code", 0}, {"report_file", (j.dir / "report.json").string()},
                                                          {"node", "n1"}}).ok());
    }
    auto m = req.mode == kernel::run_mode::compare ? sched::merge_compare(*b, req, "20260101_000000")
                                                   : sched::merge_analyze(*b, req, "20260101_000000");
    expect_closed(sched::merged_report_schema(mode), m.report, mode);
    EXPECT_EQ(validate(sched::merged_report_schema("any"), m.report), "") << mode;
    expect_closed(sched::batch_list_row_schema(), sched::batch_list_row(*b), "jobs list row");
    expect_closed(sched::batch_status_schema(), sched::batch_status_json(*b), "jobs status");
  }
}

TEST(writers_schema, trace_report_and_gap_analysis_of_a_real_trace) {
  auto out = make_temp_dir("/tmp", "magpie_writers_trace_").value();
  scoped_dir cleanup(out);
  fs::path trace = fs::path(k_source) / "examples" / "traces" / "llama_tiny-rank-0.pt.trace.json.gz";
  trace::report_config cfg;
  cfg.gpu_name = "H200";
  auto r = trace::run_trace_report(cfg, trace, out / "report");
  ASSERT_TRUE(r.ok()) << r.get_status().message();
  expect_closed(trace::trace_report_schema(), trace::trace_report_json(*r), "trace report");
  auto gc = trace::decode_gap_config({{"enabled", true}, {"top_k", 5}});
  ASSERT_TRUE(gc.ok());
  auto g = trace::run_gap_analysis(*gc, fs::path(k_source) / "examples" / "traces", out / "gap");
  ASSERT_TRUE(g.ok()) << g.get_status().message();
  expect_closed(trace::gap_analysis_schema(), trace::gap_block_json(*g), "gap analysis");
}

TEST(writers_schema, source_mapping_report) {
  fs::path root = fs::path(k_source) / "tests" / "fixtures" / "kernel_sources";
  auto infos = source::find_kernel_sources({"vectorAdd", "no_such_kernel_anywhere"}, {root});
  ASSERT_TRUE(infos.ok()) << infos.get_status().message();
  json r = source::kernel_sources_report(*infos, {{"vectorAdd", 3, 1.5}, {"no_such_kernel_anywhere", 1, 0.5}}, {root});
  expect_closed(source::kernel_sources_report_schema(), r, "sources report");
  expect_closed(source::kernel_source_schema(), r["kernels"][0], "one kernel");
}

TEST(writers_schema, results_store_comparison) {
  auto dir = make_temp_dir("/tmp", "magpie_writers_store_").value();
  scoped_dir cleanup(dir);
  auto ctx = context();
  std::vector<fs::path> ws;
  for (int i = 0; i < 2; ++i) {
    fs::path w = dir / ("analyze_k_2026010" + std::to_string(i) + "_000000");
    fs::create_directories(w);
    json entry = kernel::kernel_eval_json(full_kernel("k"), ctx);
    entry["timing"]["stats_ns"]["median"] = 1000.0 * (i + 1);
    ASSERT_TRUE(write_json_file(w / "analyze_report.json", {{"mode", "analyze"}, {"results", {entry}}}).ok());
    ws.push_back(w);
  }
  fs::path db = dir / "db.sqlite";
  for (const auto& w : ws) ASSERT_TRUE(store::register_workspace(db, w).ok());
  auto st = store::results_store::open(db);
  ASSERT_TRUE(st.ok());
  store::compare_options o;
  auto c = store::compare_runs(*st, {ws[0].string()}, {ws[1].string()}, o);
  ASSERT_TRUE(c.ok()) << c.get_status().message();
  expect_closed(store::comparison_schema(), store::comparison_to_json(*c, o), "comparison");
}

TEST(writers_schema, serving_config) {
  auto cfg = serve::parse_benchmark_yaml(
      "benchmark:\n  framework: vllm\n  model: m\n  server_lifecycle: {enabled: true}\n"
      "  gap_analysis: {enabled: true, top_k: 5, categories: [gemm]}\n"
      "  profiler: {tracelens: {enabled: true, analysis_stages: [gemm]}}\n",
      "t.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.get_status().message();
  cfg->base_url = "http://127.0.0.1:1";
  expect_closed(serve::benchmark_config_schema(), serve::benchmark_config_json(*cfg), "benchmark config");
}
