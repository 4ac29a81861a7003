#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/fs.h"
#include "core/json.h"
#include "store/compare.h"
#include "store/extract.h"
#include "store/report_codec.h"
#include "store/results_store.h"

namespace magpie::store {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = make_temp_dir(fs::temp_directory_path(), "magpie_store_");
    ASSERT_TRUE(d.ok());
    m_dir = *d;
    m_db = m_dir / k_default_db_name;
  }
  void TearDown() override { fs::remove_all(m_dir); }

  /// A benchmark workspace with the given throughput and model (the config).
  fs::path bench(const std::string& name, double output_tps, const std::string& model, bool with_samples = false) {
    fs::path ws = m_dir / name;
    fs::create_directories(ws);
    json r = {{"success", true},
              {"framework", "vllm"},
              {"model", model},
              {"config", {{"framework", "vllm"}, {"model", model}, {"concurrency", 32}, {"output_dir", ws.string()}}},
              {"throughput", {{"request_throughput", output_tps / 100}, {"output_throughput", output_tps},
                              {"completed_requests", 40}, {"duration_seconds", 10.0}}},
              {"latency", {{"ttft", {{"mean_ms", 50.0}, {"median_ms", 48.0}, {"p99_ms", 90.0}, {"std_ms", 5.0}}}}},
              {"execution_time", 30.0}};
    EXPECT_TRUE(write_json_file(ws / "benchmark_report.json", r).ok());
    if (with_samples) {
      json s = {{"ttfts", json::array()}, {"latencies", json::array()}, {"output_lens", json::array()}};
      for (int i = 0; i < 50; ++i) {
        s["ttfts"].push_back(0.048 + 0.001 * (i % 5) + (output_tps > 100 ? 0.02 : 0.0));
        s["latencies"].push_back(1.0);
        s["output_lens"].push_back(11);
      }
      EXPECT_TRUE(write_json_file(ws / "benchmark_result.json", s).ok());
    }
    return ws;
  }
  int64_t reg(const fs::path& ws) {
    auto id = register_workspace(m_db, ws);
    EXPECT_TRUE(id.ok()) << id.get_status().to_string();
    return id.ok() ? *id : -1;
  }
  const metric_comparison* find(const comparison& c, const std::string& name) {
    for (const auto& m : c.metrics)
      if (m.name == name) return &m;
    return nullptr;
  }

  fs::path m_dir, m_db;
};

TEST_F(StoreTest, RegisterListShowAndReRegister) {
  int64_t a = reg(bench("benchmark_vllm_1", 1000, "m"));
  int64_t b = reg(bench("benchmark_vllm_2", 1050, "m"));
  EXPECT_NE(a, b);
  auto st = results_store::open(m_db);
  ASSERT_TRUE(st.ok());
  auto rows = st->list("", 0);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  auto run = st->find(std::to_string(a));
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->mode, "benchmark");
  EXPECT_EQ(run->name, "vllm/m");
  EXPECT_TRUE(run->success);
  auto byws = st->find((m_dir / "benchmark_vllm_2").string());
  ASSERT_TRUE(byws.ok());
  EXPECT_EQ(byws->id, b);
  EXPECT_EQ(run->config_hash, byws->config_hash);  // output_dir is volatile: same configuration
  auto ms = st->metrics(a);
  ASSERT_TRUE(ms.ok());
  bool found = false;
  for (const auto& m : *ms)
    if (m.name == "throughput.output_throughput") {
      found = true;
      EXPECT_DOUBLE_EQ(m.value, 1000);
      EXPECT_EQ(m.direction, "higher");
      EXPECT_EQ(m.unit, "tok/s");
    }
  EXPECT_TRUE(found);
  reg(m_dir / "benchmark_vllm_1");  // re-register: replaced, not duplicated
  EXPECT_EQ(st->list("", 0)->size(), 2u);
  EXPECT_EQ(st->list("analyze", 0)->size(), 0u);
  EXPECT_FALSE(st->find("999").ok());
  EXPECT_FALSE(register_workspace(m_db, m_dir / "missing").ok());
}

TEST_F(StoreTest, FivePercentThroughputChangeIsBeyondNoiseOnlyWithSupportingReplicates) {
  // One run per side: 5 % better throughput but run-to-run noise unknown.
  reg(bench("a1", 1000, "base"));
  reg(bench("b1", 1050, "cand"));
  auto st = results_store::open(m_db);
  ASSERT_TRUE(st.ok());
  compare_options o;
  auto c1 = compare_runs(*st, {(m_dir / "a1").string()}, {(m_dir / "b1").string()}, o);
  ASSERT_TRUE(c1.ok()) << c1.get_status().to_string();
  const auto* m1 = find(*c1, "throughput.output_throughput");
  ASSERT_NE(m1, nullptr);
  EXPECT_NEAR(m1->ratio, 1.05, 1e-12);
  EXPECT_FALSE(m1->beyond_noise.has_value());
  EXPECT_EQ(m1->verdict, "insufficient_data");

  // Quiet replicates (±0.3 %): the 5 % change is beyond noise and an improvement.
  reg(bench("a2", 1003, "base"));
  reg(bench("a3", 997, "base"));
  reg(bench("b2", 1052, "cand"));
  reg(bench("b3", 1047, "cand"));
  auto c2 = compare_runs(*st, {(m_dir / "a1").string()}, {(m_dir / "b1").string()}, o);
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ(c2->a_runs.size(), 3u);
  EXPECT_EQ(c2->b_runs.size(), 3u);
  const auto* m2 = find(*c2, "throughput.output_throughput");
  ASSERT_NE(m2, nullptr);
  ASSERT_TRUE(m2->beyond_noise.has_value());
  EXPECT_TRUE(*m2->beyond_noise);
  EXPECT_EQ(m2->verdict, "improved");
  EXPECT_EQ(m2->run_to_run.method, "welch_t");
  // Completed requests equal on both sides with zero variance: not beyond noise.
  const auto* done = find(*c2, "throughput.completed_requests");
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(done->verdict, "no_significant_change");
}

TEST_F(StoreTest, NoisyReplicatesDoNotSupportAFivePercentChange) {
  reg(bench("a1", 940, "base"));
  reg(bench("a2", 1000, "base"));
  reg(bench("a3", 1060, "base"));
  reg(bench("b1", 990, "cand"));
  reg(bench("b2", 1050, "cand"));
  reg(bench("b3", 1110, "cand"));
  auto st = results_store::open(m_db);
  auto c = compare_runs(*st, {"1"}, {"4"}, compare_options{});
  ASSERT_TRUE(c.ok());
  const auto* m = find(*c, "throughput.output_throughput");
  ASSERT_NE(m, nullptr);
  EXPECT_NEAR(m->ratio, 1.05, 1e-9);
  ASSERT_TRUE(m->beyond_noise.has_value());
  EXPECT_FALSE(*m->beyond_noise);
  EXPECT_EQ(m->verdict, "no_significant_change");
}

TEST_F(StoreTest, ReplicatesOfOneConfigurationCompareNamedRunsOnly) {
  reg(bench("a1", 1000, "same"));
  reg(bench("a2", 1050, "same"));
  auto st = results_store::open(m_db);
  auto c = compare_runs(*st, {"1"}, {"2"}, compare_options{});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->a_runs.size(), 1u);
  EXPECT_EQ(c->b_runs.size(), 1u);
  ASSERT_FALSE(c->notes.empty());
}

TEST_F(StoreTest, PerRequestSamplesGiveWithinRunEvidenceOnly) {
  reg(bench("a1", 100, "base", true));
  reg(bench("b1", 105, "cand", true));
  auto st = results_store::open(m_db);
  auto samples = st->samples(1);
  ASSERT_TRUE(samples.ok());
  ASSERT_EQ(samples->count("latency.ttft"), 1u);
  EXPECT_EQ(samples->at("latency.ttft").size(), 50u);
  EXPECT_EQ(samples->count("latency.tpot"), 1u);
  auto c = compare_runs(*st, {"1"}, {"2"}, compare_options{});
  ASSERT_TRUE(c.ok());
  const auto* m = find(*c, "latency.ttft.median_ms");
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(m->beyond_noise.has_value());  // within-run evidence is never run-to-run evidence
  ASSERT_TRUE(m->within_run_significant.has_value());
  EXPECT_TRUE(*m->within_run_significant);
  EXPECT_EQ(m->within_run.method, "bootstrap_within_run");
}

TEST_F(StoreTest, AnalyzeReportMetricsAndModeMismatch) {
  fs::path ws = m_dir / "analyze_k_1";
  fs::create_directories(ws);
  json r = {{"mode", "analyze"},
            {"timestamp", "20260101_120000"},
            {"summary", {{{"kernel_id", "k"}}}},
            {"results",
             {{{"correctness_state", "SUCCESS"},
               {"score", 1.0},
               {"extra", {{"kernel_id", "k"}}},
               {"timing", {{"success", true}, {"stats_ns", {{"n", 50}, {"median", 12000.0}, {"p25", 11900.0},
                                                          {"p75", 12100.0}, {"rel_stdev", 0.01}}}}},
               {"kernel_config", {{"id", "k"}, {"source", "k.cu"}}}}}}};
  ASSERT_TRUE(write_json_file(ws / "analyze_report.json", r).ok());
  auto rec = read_workspace(ws);
  ASSERT_TRUE(rec.ok()) << rec.get_status().to_string();
  EXPECT_EQ(rec->mode, run_kind::analyze);
  EXPECT_TRUE(rec->success);
  EXPECT_EQ(rec->timestamp, "20260101_120000");
  ASSERT_GE(rec->metrics.size(), 3u);
  EXPECT_EQ(rec->metrics[0].name, "k.kernel_time_median_us");
  EXPECT_DOUBLE_EQ(rec->metrics[0].value, 12.0);
  EXPECT_EQ(rec->metrics[0].direction, "lower");
  reg(ws);
  reg(bench("b1", 100, "m"));
  auto st = results_store::open(m_db);
  EXPECT_FALSE(compare_runs(*st, {"1"}, {"2"}, compare_options{}).ok());
  fs::create_directories(m_dir / "empty");
  EXPECT_FALSE(read_workspace(m_dir / "empty").ok());
}

TEST(ConfigHash, IgnoresVolatileKeysAndKeyOrder) {
  json a = {{"model", "m"}, {"tp", 1}, {"output_dir", "/x"}};
  json b = {{"tp", 1}, {"model", "m"}, {"output_dir", "/y"}, {"timestamp", "t"}};
  json c = {{"tp", 2}, {"model", "m"}};
  EXPECT_EQ(config_hash(a), config_hash(b));
  EXPECT_NE(config_hash(a), config_hash(c));
  EXPECT_EQ(config_hash(a).size(), 16u);
}

}  // namespace
}  // namespace magpie::store

namespace {
/// Sets (or, with nullptr, unsets) an environment variable for the scope; restores it after.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old, m_had = true;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~scoped_env() {
    if (m_had) setenv(m_name.c_str(), m_old.c_str(), 1);
    else unsetenv(m_name.c_str());
  }

 private:
  std::string m_name, m_old;
  bool m_had = false;
};
}  // namespace

TEST(store, per_user_store_follows_magpie_results_then_xdg_then_home) {
  scoped_env a("MAGPIE_RESULTS", nullptr), b("XDG_DATA_HOME", nullptr), c("HOME", "/home/u");
  EXPECT_EQ(magpie::store::user_db_path(), magpie::fs::path("/home/u/.local/share/magpie/results.sqlite"));
  {
    scoped_env rel("XDG_DATA_HOME", "relative/dir");  // not absolute: ignored, as the XDG spec says
    EXPECT_EQ(magpie::store::user_db_path(), magpie::fs::path("/home/u/.local/share/magpie/results.sqlite"));
  }
  scoped_env x("XDG_DATA_HOME", "/data");
  EXPECT_EQ(magpie::store::user_db_path(), magpie::fs::path("/data/magpie/results.sqlite"));
  scoped_env m("MAGPIE_RESULTS", "/tmp/r.sqlite");
  EXPECT_EQ(magpie::store::user_db_path(), magpie::fs::path("/tmp/r.sqlite"));
  // A run in /work/out/analyze_x registers beside it and in the per-user store.
  auto dbs = magpie::store::run_db_paths("/work/out/analyze_x");
  ASSERT_EQ(dbs.size(), 2u);
  EXPECT_EQ(dbs[0], magpie::fs::path("/work/out/magpie_results.sqlite"));
  EXPECT_EQ(dbs[1], magpie::fs::path("/tmp/r.sqlite"));
  scoped_env same("MAGPIE_RESULTS", "/work/out/magpie_results.sqlite");
  EXPECT_EQ(magpie::store::run_db_paths("/work/out/analyze_x").size(), 1u);
  scoped_env none_m("MAGPIE_RESULTS", nullptr), none_x("XDG_DATA_HOME", nullptr), none_h("HOME", nullptr);
  EXPECT_TRUE(magpie::store::user_db_path().empty());
  EXPECT_EQ(magpie::store::run_db_paths("/work/out/analyze_x").size(), 1u);
}
