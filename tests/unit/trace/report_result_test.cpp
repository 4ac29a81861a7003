// run_trace_report / run_inference_analysis return typed results; the files they write are the
// printers' output (report.json = trace_report_json), and copies of a result stay usable.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include "core/fs.h"
#include "trace/api.h"
#include "trace/report_printer.h"
#include "trace/report_result.h"
#include "trace/stage_codec.h"

namespace magpie::trace {
namespace {

const fs::path k_trace = fs::path(MAGPIE_TEST_SOURCE_DIR) / "examples" / "traces" / "llama_tiny-rank-0.pt.trace.json.gz";
// The GPU spec table is found next to the magpie binary; the sanitizer build has none (it builds
// only the unit tests), so the source tree's data/ unless the environment names one.
const bool k_data_dir = ::setenv("MAGPIE_DATA_DIR", MAGPIE_TEST_SOURCE_DIR "/data", 0) == 0;

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

TEST(report_result, report_json_on_disk_is_the_printed_result_and_a_copy_prints_the_same) {
  ASSERT_TRUE(k_data_dir);
  fs::path out = fresh_dir("magpie_report_result");
  report_config cfg;
  cfg.gpu_name = "H200";
  cfg.html = false;
  auto r = run_trace_report(cfg, k_trace, out);
  ASSERT_TRUE(r.ok()) << r.get_status().message();
  ASSERT_TRUE(r->input.usable());
  ASSERT_TRUE(r->spec);
  EXPECT_EQ(r->analysis.spec, r->spec.get());
  ASSERT_FALSE(r->output_files.empty());
  EXPECT_EQ(r->output_files.front(), (out / "report.json").string());
  auto text = read_file(out / "report.json");
  ASSERT_TRUE(text.ok());
  json printed = trace_report_json(*r);
  EXPECT_EQ(json::parse(*text), printed);  // ordered: key order included
  EXPECT_EQ(printed["trace"]["gpu_events"], r->trace.gpu_events);
  report_result copy = *r;  // the copy shares the spec its analysis points at
  *r = report_result{};  // the original and its spec reference are gone
  EXPECT_EQ(trace_report_json(copy), printed);
  fs::remove_all(out);
}

TEST(report_result, inference_result_prints_one_stage_result_per_requested_stage) {
  fs::path out = fresh_dir("magpie_inference_result");
  inference_config cfg;
  cfg.trace_file = k_trace;
  cfg.gpu_name = "H200";
  cfg.stages = {"decode", "pd", "decode_only"};  // aliases collapse, order kept
  auto r = run_inference_analysis(cfg, k_trace.parent_path(), out);
  ASSERT_TRUE(r.ok()) << r.get_status().message();
  EXPECT_EQ(r->stages, (std::vector<inference_stage>{inference_stage::decode, inference_stage::prefilldecode}));
  ASSERT_EQ(r->stage_results.size(), 2u);
  json b = inference_result_json(*r);
  std::vector<std::string> keys;
  for (auto it = b["stage_results"].begin(); it != b["stage_results"].end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"decode", "prefilldecode"}));
  for (const auto& s : r->stage_results) {
    const json& j = b["stage_results"][inference_stage_name(s.stage)];
    EXPECT_EQ(j.contains("error"), !s.pick.step.has_value()) << inference_stage_name(s.stage);
    if (s.pick.step) {
      EXPECT_TRUE(fs::exists(s.simple_summary_file)) << inference_stage_name(s.stage);
    }
  }
  for (const auto& f : r->output_files) EXPECT_TRUE(fs::exists(f)) << f;
  EXPECT_EQ(b["output_files"].size(), r->output_files.size());
  fs::remove_all(out);
}

TEST(report_result, a_missing_trace_is_an_error_in_the_block_not_a_status) {
  fs::path dir = fresh_dir("magpie_inference_empty");
  fs::create_directories(dir);
  auto r = run_inference_analysis({}, dir, dir / "out");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->rank0_trace);
  EXPECT_FALSE(r->input);
  ASSERT_EQ(r->errors.size(), 1u);
  json b = inference_result_json(*r);
  EXPECT_TRUE(b["rank0_trace"].is_null());
  EXPECT_FALSE(b.contains("input"));
  EXPECT_FALSE(b.contains("split_source"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace magpie::trace
