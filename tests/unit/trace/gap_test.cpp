#include <gtest/gtest.h>

#include <map>

#include "core/csv.h"
#include "core/fs.h"
#include "core/strings.h"
#include "trace/discovery.h"
#include "trace/gap_config_codec.h"
#include "trace/gap_analysis.h"
#include "trace/gap_printer.h"
#include "trace/util.h"

namespace magpie::trace {
namespace {

const fs::path k_src = MAGPIE_TEST_SOURCE_DIR;
const fs::path k_fix = k_src / "tests/fixtures/traces";

TEST(TraceUtil, PythonFloatRepr) {
  EXPECT_EQ(python_float_repr(0.0), "0.0");
  EXPECT_EQ(python_float_repr(100.0), "100.0");
  EXPECT_EQ(python_float_repr(12.5), "12.5");
  EXPECT_EQ(python_float_repr(100.0 / 3.0), "33.333333333333336");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(python_float_repr(0.00001), "1e-05");
  EXPECT_EQ(python_float_repr(-2.5e-7), "-2.5e-07");
  EXPECT_EQ(python_float_repr(5361505961922.21), "5361505961922.21");
}

TEST(TraceUtil, GapShapeFormatting) {
  EXPECT_EQ(format_gap_shape("[[5, 2880], [2880, 201088]]"), "[5,2880]x[2880,201088]");
  EXPECT_EQ(format_gap_shape("[[8192, 1024], [2, 48], [], [], []]"), "[8192,1024]x[2,48]");
  EXPECT_EQ(format_gap_shape("[[], []]"), "");
  EXPECT_EQ(format_gap_shape("[[[2, 3], [4]], [1]]"), "[[2, 3],[4]]x[1]");  // TensorList: Python str()
  EXPECT_EQ(format_gap_shape("[\"x\", 3, [7]]"), "[7]");
  EXPECT_EQ(python_repr_json("[\"a'b\", true, null, 1.0, {\"k\": -0}]"), "[\"a'b\", True, None, 1.0, {'k': 0}]");
}

TEST(GapAnalysis, TwoRanksMergeAndPercentagesOfUntruncatedTotal) {
  gap_config cfg;
  cfg.top_k = 1;
  gap_result r = analyze_gap(cfg, k_fix / "two_ranks");
  ASSERT_TRUE(r.errors.empty()) << r.errors[0];
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_EQ(r.ranks[0].rank, 0);
  EXPECT_EQ(r.ranks[1].rank, 1);
  // rank 0: gemm 30 + nccl 40 + memcpy 10 = 80; rank 1: gemm 50 + nccl 10 = 60.
  EXPECT_DOUBLE_EQ(r.ranks[0].total_us, 80.0);
  EXPECT_DOUBLE_EQ(r.ranks[1].total_us, 60.0);
  EXPECT_DOUBLE_EQ(r.total_us, 140.0);
  ASSERT_EQ(r.merged.size(), 1u);  // truncated to top_k ...
  EXPECT_EQ(r.merged[0].name, "gemm_kernel");
  EXPECT_EQ(r.merged[0].calls, 2);
  EXPECT_EQ(r.merged[0].unique_shapes(), "[16,32]x[32,64]; [16,32]x[32,128]");
  std::string csv = gap_csv(r);
  // ... but % Total stays relative to the untruncated total: 80 / 140.
  EXPECT_NE(csv.find("gemm_kernel,2,80.00,40.00,57.14,\"[16,32]x[32,64]; [16,32]x[32,128]\"\r\n"), std::string::npos)
      << csv;
  std::string r0 = gap_rank_csv(r.ranks[0]);
  EXPECT_NE(r0.find("ncclDevKernel_AllReduce_Sum_bf16_RING_LL,1,40.00,40.00,50.00,\r\n"), std::string::npos) << r0;
  json j = gap_result_json(r);
  EXPECT_EQ(j["num_ranks"], 2);
  EXPECT_EQ(j["top_kernels"][0]["calls"], 2);
  EXPECT_DOUBLE_EQ(j["top_kernels"][0]["pct_total"].get<double>(), 80.0 / 140.0 * 100.0);
  EXPECT_EQ(j["config"]["categories"][0], "kernel");
}

TEST(GapAnalysis, CategoryFiltersWindowAndMinDuration) {
  gap_config cfg;
  cfg.categories = std::vector<std::string>{"KERNEL"};  // case-insensitive substring
  cfg.min_duration_us = 35;
  gap_result r = analyze_gap(cfg, k_fix / "two_ranks");
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_DOUBLE_EQ(r.ranks[0].total_us, 40.0);  // nccl 40 only (gemm 30 < 35; memcpy filtered)
  EXPECT_DOUBLE_EQ(r.ranks[1].total_us, 50.0);

  gap_config w;
  w.trace_start_pct = 61;  // rank 0 span [100, 200] (dur > 0 events) → window [161, 200]
  gap_result rw = analyze_gap(w, k_fix / "two_ranks");
  ASSERT_EQ(rw.ranks.size(), 2u);
  std::vector<std::string> names;
  for (const auto& k : rw.ranks[0].kernels) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Memcpy HtoD (Pageable -> Device)"}));

  gap_config none;
  none.categories = std::vector<std::string>{};
  none.ignore_categories = std::nullopt;
  gap_result ra = analyze_gap(none, k_fix / "two_ranks");
  EXPECT_DOUBLE_EQ(ra.ranks[0].total_us, 80.0 + 20.0 + 100.0);  // cpu_op and annotation count too
}

TEST(GapAnalysis, MissingFieldsFollowPythonDefaults) {
  gap_config cfg;
  cfg.top_k = 50;
  fs::path dir = fs::temp_directory_path() / "magpie_gap_missing";
  fs::create_directories(dir);
  fs::copy_file(k_fix / "missing_fields.json", dir / "x.json", fs::copy_options::overwrite_existing);
  gap_result r = analyze_gap(cfg, dir);
  ASSERT_EQ(r.ranks.size(), 1u);
  std::map<std::string, std::pair<int64_t, double>> got;
  for (const auto& k : r.ranks[0].kernels) got[k.name] = {k.calls, k.total_us};
  EXPECT_EQ(got["no_dur"].first, 1);
  EXPECT_EQ(got["no_dur"].second, 0.0);
  EXPECT_EQ(got["<?>"].second, 1.0);   // missing name
  EXPECT_EQ(got.count("no_cat"), 0u);  // no category: filtered by the allow-list
  EXPECT_EQ(got["no_ts"].second, 8.0);  // no window: events without ts count
  fs::remove_all(dir);
}

// Shapes come from the cpu_op with the kernel's External id; a later cpu_op with the same id
// wins. Ids out of file order take the sorting path, ids in order are searched in place.
TEST(GapAnalysis, ShapesByExternalIdLastOneWinsInAnyOrder) {
  auto op = [](int ext, int n) {
    return strprintf(R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 1, "args": {"External id": %d, "Input Dims": [[%d, 2]]}})",
                     ext, n);
  };
  auto kernel = [](int ext) {
    return strprintf(R"({"ph": "X", "cat": "kernel", "name": "k%d", "ts": 2, "dur": 1, "args": {"External id": %d}})", ext, ext);
  };
  for (bool in_order : {true, false}) {
    std::vector<std::string> ev = in_order ? std::vector<std::string>{op(1, 10), op(2, 20), op(2, 21), op(3, 30)}
                                           : std::vector<std::string>{op(3, 30), op(2, 20), op(1, 10), op(2, 21)};
    for (int k = 1; k <= 4; ++k) ev.push_back(kernel(k));
    fs::path dir = fs::temp_directory_path() / "magpie_gap_shapes";
    fs::create_directories(dir);
    ASSERT_TRUE(write_file_atomic(dir / "x.json", "{\"traceEvents\": [" + join(ev, ", ") + "]}").ok());
    gap_config cfg;
    gap_result r = analyze_gap(cfg, dir);
    ASSERT_EQ(r.ranks.size(), 1u);
    std::map<std::string, std::string> shapes;
    for (const auto& k : r.ranks[0].kernels) shapes[k.name] = k.unique_shapes();
    EXPECT_EQ(shapes["k1"], "[10,2]") << in_order;
    EXPECT_EQ(shapes["k2"], "[21,2]") << in_order;
    EXPECT_EQ(shapes["k3"], "[30,2]") << in_order;
    EXPECT_EQ(shapes["k4"], "") << in_order;
    fs::remove_all(dir);
  }
}

TEST(GapAnalysis, ConfigValidationAndJson) {
  gap_config c;
  c.trace_start_pct = 50;
  c.trace_end_pct = 50;
  EXPECT_FALSE(c.validate().ok());
  auto parsed = decode_gap_config(json{{"top_k", 5}, {"categories", nullptr}, {"trace_end_pct", 80}});
  ASSERT_TRUE(parsed.ok()) << parsed.get_status().message();
  EXPECT_EQ(parsed->top_k, 5);
  EXPECT_FALSE(parsed->categories.has_value());
  EXPECT_FALSE(decode_gap_config(json{{"top_kk", 5}}).ok());
  EXPECT_FALSE(decode_gap_config(json{{"trace_start_pct", 120}}).ok());
  json j = gap_config_json(gap_config{});
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"enabled", "trace_start_pct", "trace_end_pct", "top_k", "min_duration_us",
                                            "categories", "ignore_categories", "find_kernel_sources",
                                            "kernel_source_repos", "auto_clone_repos", "repos_base_dir"}));
}

TEST(GapAnalysis, ErrorsForMissingDirectoryAndNoTraces) {
  gap_result r = analyze_gap(gap_config{}, k_fix / "nope");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].rfind("Trace directory not found: ", 0), 0u);
  fs::path empty = fs::temp_directory_path() / "magpie_gap_empty";
  fs::create_directories(empty);
  r = analyze_gap(gap_config{}, empty);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].rfind("No trace files found in ", 0), 0u);
}

TEST(Discovery, OrderAndLayouts) {
  fs::path d = fs::temp_directory_path() / "magpie_disc";
  fs::remove_all(d);
  fs::create_directories(d / "torch_trace");
  auto touch = [](const fs::path& p, const std::string& body) { ASSERT_TRUE(write_file_atomic(p, body).ok()); };
  std::string trace = "{\"traceEvents\": []}";
  touch(d / "torch_trace/a-rank-10.123.pt.trace.json", trace);
  touch(d / "torch_trace/a-rank-2.456.pt.trace.json", trace);
  touch(d / "torch_trace/other.json", trace);
  discovery r = discover_rank_traces(d);  // workspace: torch_trace/ is descended
  ASSERT_EQ(r.files.size(), 2u);
  EXPECT_EQ(r.rule, "rank_json");
  EXPECT_EQ(r.files[0].rank, 2);
  EXPECT_EQ(r.files[1].rank, 10);

  fs::path s = fs::temp_directory_path() / "magpie_disc_sub";
  fs::remove_all(s);
  fs::create_directories(s / "pp0_dp0_tp1");
  fs::create_directories(s / "rank_0");
  touch(s / "pp0_dp0_tp1/x.json", trace);
  touch(s / "rank_0/y.json", trace);
  r = discover_rank_traces(s);
  ASSERT_EQ(r.files.size(), 2u);
  EXPECT_EQ(r.rule, "subdirs");
  EXPECT_EQ(r.files[0].rank, 0);
  EXPECT_EQ(r.files[1].rank, 1);

  fs::path f = fs::temp_directory_path() / "magpie_disc_fb";
  fs::remove_all(f);
  fs::create_directories(f);
  touch(f / "b_rank3.json", trace);
  touch(f / "a.json", "[]");
  touch(f / "config.json", "{\"model\": 1}");
  touch(f / "vllm_async_llm.json", trace);
  r = discover_rank_traces(f);
  ASSERT_EQ(r.files.size(), 2u);
  EXPECT_EQ(r.rule, "fallback");
  EXPECT_EQ(r.files[0].path.filename(), "a.json");  // rank = position 0
  EXPECT_EQ(r.files[1].rank, 3);
  EXPECT_EQ(r.skipped, (std::vector<std::string>{"config.json"}));
  EXPECT_EQ(rank_from_magpie_name("x-rank-7.1.pt.trace.json.gz"), 7);
  EXPECT_EQ(rank_from_magpie_name("x-rank-7"), -1);
}

}  // namespace
}  // namespace magpie::trace
