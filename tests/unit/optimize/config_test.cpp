// optimize.yaml parsing: a complete config, defaults, and errors that name file:line and field.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>

#include "core/fs.h"
#include "optimize/config.h"
#include "optimize/config_printer.h"

namespace magpie::optimize {
namespace {

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/optimize_config_XXXXXX";
    m_dir = mkdtemp(tmpl);
    ASSERT_TRUE(write_file_atomic(m_dir / "compare_rms.yaml", "kernels: []\n").ok());
  }
  void TearDown() override { fs::remove_all(m_dir); }

  status_or<optimize_config> parse(const std::string& text) { return parse_optimize_yaml(text, m_dir / "optimize.yaml"); }

  static std::string base(const std::string& extra = {}, const std::string& server_cmd = "[\"{python}\", \"{config_dir}/server.py\", \"--port\", \"{port}\", \"--kernels\", \"{variant}\"]") {
    return "optimize:\n"
           "  name: test\n"
           "  workload: {random_input_len: 32, random_output_len: 16, random_range_ratio: 0.5, max_concurrency: 8, ignore_eos: true}\n"
           "  server:\n"
           "    command: " + server_cmd + "\n"
           "    info_path: /loop_info\n"
           "    identity_keys: [weights_sha256]\n"
           "  sources: {repos: [.]}\n"
           "  ops:\n"
           "    rms_norm: {compare: compare_rms.yaml, baseline_id: rms_norm_baseline, kernels: [_rms_a, _rms_b],\n"
           "               candidates: {rms_norm_onepass: onepass}}\n" + extra;
  }

  fs::path m_dir;
};

TEST_F(ConfigTest, ParsesAndFillsDefaults) {
  auto c = parse(base("  e2e: {order: abab, servers: concurrent, pairs: 4, max_pairs: 6, target_mde_pct: 3, control: aa,"
                      " max_series_s: 90}\n"
                      "  decision: {alpha: 0.01, metrics: [output_throughput, tpot_mean_ms]}\n"
                      "  compare: {max_time_s: 2, env: {MAGPIE_LOOP_TIMED_TOKENS: \"{concurrency}\"}}\n"));
  ASSERT_TRUE(c.ok()) << c.get_status().message();
  EXPECT_EQ(c->name, "test");
  EXPECT_EQ(c->workload.concurrency(), 8);
  EXPECT_EQ(c->workload.bench.client.random_input_len, 32);
  EXPECT_TRUE(c->workload.bench.client.ignore_eos);
  EXPECT_FALSE(c->workload.bench.profiler.torch_profiler);
  EXPECT_EQ(c->workload.warmup_prompts, -1);
  EXPECT_EQ(c->ops.size(), 1u);
  EXPECT_EQ(c->ops[0].compare_yaml, m_dir / "compare_rms.yaml");
  EXPECT_EQ(c->ops[0].candidates.front().second, "onepass");
  EXPECT_EQ(c->source_repos.front(), m_dir / ".");
  EXPECT_EQ(c->e2e.order, "abab");
  EXPECT_EQ(c->e2e.servers, "concurrent");
  EXPECT_EQ(c->e2e.max_pairs, 6);
  EXPECT_EQ(c->e2e.control, "aa");
  EXPECT_DOUBLE_EQ(c->e2e.max_series_s, 90);
  EXPECT_DOUBLE_EQ(c->decision.alpha, 0.01);
  EXPECT_EQ(c->decision.metrics.size(), 2u);
  EXPECT_EQ(c->compare_env.front().second, "{concurrency}");
  EXPECT_EQ(c->op_of_kernel("_rms_b"), "rms_norm");
  EXPECT_EQ(optimize_config_json(*c)["e2e"]["pairs"], 4);
}

TEST_F(ConfigTest, LegacyPrimaryMetric) {
  auto c = parse(base("  decision: {primary_metric: tpot_mean_ms}\n"));
  ASSERT_TRUE(c.ok()) << c.get_status().message();
  EXPECT_EQ(c->decision.metrics, std::vector<std::string>{"tpot_mean_ms"});
  EXPECT_EQ(c->e2e.pairs, 3);
  EXPECT_EQ(c->e2e.max_pairs, 3);
  EXPECT_DOUBLE_EQ(c->e2e.max_series_s, 0);
}

TEST_F(ConfigTest, ErrorsNameFileLineAndField) {
  struct bad {
    std::string text, want;
  };
  std::vector<bad> cases = {
      {base("  e2e: {order: aabb}\n"), "optimize.e2e.order"},
      {base("  e2e: {pairs: 1}\n"), "must be >= 2"},
      {base("  e2e: {pairs: 3, max_pairs: 2}\n"), "optimize.e2e.max_pairs"},
      {base("  e2e: {max_series_s: -5}\n"), "optimize.e2e.max_series_s"},
      {base("  decision: {metrics: [goodness]}\n"), "unknown metric 'goodness'"},
      {base("  surprise: 1\n"), "surprise"},
      {base("", "[python3, server.py]"), "{variant}"},
      {base("  gap: {start_pct: 80, end_pct: 20}\n"), "optimize.gap"},
      {"optimize:\n  name: x\n", "optimize.workload"},
      {"benchmark: {}\n", "top-level 'optimize:'"},
  };
  for (const auto& c : cases) {
    auto r = parse(c.text);
    ASSERT_FALSE(r.ok()) << c.want;
    EXPECT_NE(r.get_status().message().find(c.want), std::string::npos) << r.get_status().message();
    EXPECT_NE(r.get_status().message().find("optimize.yaml"), std::string::npos) << r.get_status().message();
  }
  std::string missing = base();
  missing.replace(missing.find("compare_rms.yaml"), 16, "nope.yaml");
  auto r = parse(missing);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.get_status().message().find("optimize.ops.rms_norm.compare"), std::string::npos) << r.get_status().message();
  EXPECT_NE(r.get_status().message().find(":10:"), std::string::npos) << r.get_status().message();
}

TEST_F(ConfigTest, DirectoryOrFifoIsRefusedByName) {
  auto dir = load_optimize_config(m_dir);  // a directory, not a file
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.get_status().message().find("not a optimize config file"), std::string::npos) << dir.get_status().message();
  fs::path fifo = m_dir / "fifo.yaml";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto f = load_optimize_config(fifo);  // must not block waiting for a writer
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.get_status().message().find("fifo.yaml"), std::string::npos) << f.get_status().message();
}

TEST(Placeholders, ExpandAndRejectUnknown) {
  auto v = expand_placeholders("{baseline},{op}={impl}", {{"baseline", "baseline"}, {"op", "rms_norm"}, {"impl", "onepass"}});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, "baseline,rms_norm=onepass");
  auto bad = expand_placeholders("--port {prot}", {{"port", "1"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.get_status().message().find("{prot}"), std::string::npos);
  EXPECT_EQ(*expand_placeholders("no braces", {}), "no braces");
}

}  // namespace
}  // namespace magpie::optimize
