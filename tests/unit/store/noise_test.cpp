#include "store/noise.h"

#include <gtest/gtest.h>

namespace magpie::store {
namespace {

TEST(Noise, StudentTDistribution) {
  // Reference values (scipy.stats.t.cdf / t.ppf).
  EXPECT_NEAR(student_t_cdf(2.0, 10), 0.963306, 1e-6);
  EXPECT_NEAR(student_t_cdf(-1.5, 3), 0.115292, 1e-6);  // closed form for df=3
  EXPECT_NEAR(student_t_cdf(0.0, 7.5), 0.5, 1e-12);
  EXPECT_NEAR(student_t_critical(0.05, 4), 2.776445, 1e-5);
  EXPECT_NEAR(student_t_critical(0.05, 1), 12.706205, 1e-4);
  EXPECT_NEAR(student_t_critical(0.01, 30), 2.749996, 1e-5);
}

TEST(Noise, FivePercentChangeNeedsReplicatesThatSupportIt) {
  // Quiet replicates (≈0.5 % spread): a 5 % change is beyond noise.
  auto quiet = compare_replicates({100.0, 100.4, 99.6}, {105.0, 105.5, 104.6}, 0.05);
  EXPECT_EQ(quiet.method, "welch_t");
  EXPECT_TRUE(quiet.tested);
  EXPECT_TRUE(quiet.significant);
  EXPECT_LT(quiet.p_value, 0.001);
  EXPECT_GT(quiet.ratio_low, 1.0);
  // Noisy replicates (≈6 % spread): the same 5 % mean change is not.
  auto noisy = compare_replicates({94.0, 100.0, 106.0}, {99.0, 105.0, 111.0}, 0.05);
  EXPECT_TRUE(noisy.tested);
  EXPECT_FALSE(noisy.significant);
  EXPECT_LT(noisy.ratio_low, 1.0);
  EXPECT_NEAR(noisy.ratio, 1.05, 1e-12);
  // One run per side: untestable, never significant.
  auto single = compare_replicates({100.0}, {105.0}, 0.05);
  EXPECT_FALSE(single.tested);
  EXPECT_FALSE(single.significant);
  EXPECT_EQ(single.method, "none");
}

TEST(Noise, SingleRunAgainstReplicatedSide) {
  auto t = compare_replicates({100.0}, {105.0, 105.2, 104.8, 105.1}, 0.05);
  EXPECT_EQ(t.method, "prediction_interval");
  EXPECT_TRUE(t.significant);
  auto wide = compare_replicates({100.0}, {95.0, 115.0, 105.0}, 0.05);
  EXPECT_FALSE(wide.significant);
}

TEST(Noise, WithinRunBootstrapAndStatistics) {
  std::vector<double> a, b;
  for (int i = 0; i < 200; ++i) {
    a.push_back(10.0 + (i % 10) * 0.1);
    b.push_back(12.0 + (i % 10) * 0.1);
  }
  auto t = compare_samples(a, b, "median", 0.05, 500, 1);
  EXPECT_EQ(t.method, "bootstrap_within_run");
  EXPECT_TRUE(t.significant);
  EXPECT_GT(t.ratio_low, 1.1);
  auto same = compare_samples(a, a, "p99", 0.05, 500, 1);
  EXPECT_FALSE(same.significant);
  EXPECT_EQ(statistic_of_metric("latency.ttft.median_ms"), "median");
  EXPECT_EQ(statistic_of_metric("latency.ttft.p99_ms"), "p99");
  EXPECT_EQ(statistic_of_metric("latency.ttft.std_ms"), "");
  EXPECT_DOUBLE_EQ(evaluate_statistic({1, 2, 3, 4}, "mean"), 2.5);
}

}  // namespace
}  // namespace magpie::store
