// End-to-end statistics of the optimization loop: Welch against known values, the smallest
// detectable change, the decision (improved / within noise / regression / disagreement),
// input fingerprints and the kernel gain's prediction.
#include <gtest/gtest.h>

#include "optimize/decide.h"
#include "optimize/decide_codec.h"
#include "optimize/decide_printer.h"

namespace magpie::optimize {
namespace {

std::vector<run_metrics> runs(std::vector<double> tp, std::vector<double> tpot) {
  std::vector<run_metrics> out;
  for (size_t i = 0; i < tp.size(); ++i) out.push_back({{"output_throughput", tp[i]}, {"tpot_mean_ms", tpot[i]}});
  return out;
}

TEST(Welch, KnownValues) {
  welch_result w = welch({10, 11, 12}, {13, 14, 15});
  EXPECT_NEAR(w.t, 3.674235, 1e-5);
  EXPECT_NEAR(w.df, 4.0, 1e-6);
  EXPECT_NEAR(w.p, 0.021312, 1e-4);
  w = welch({1, 2, 3, 4, 5}, {2, 3, 4, 5, 9});  // unequal variances (reference: examples/loop's former Python)
  EXPECT_NEAR(w.t, 1.1428571, 1e-6);
  EXPECT_NEAR(w.df, 6.452133, 1e-5);
  EXPECT_NEAR(w.p, 0.2937255, 1e-5);
  w = welch({100, 101, 99}, {110, 111, 109.5});
  EXPECT_NEAR(w.p, 0.000228484, 2e-6);
  EXPECT_DOUBLE_EQ(welch({5, 5}, {5, 5}).p, 1.0);
  EXPECT_DOUBLE_EQ(welch({5, 5}, {6, 6}).p, 0.0);
  EXPECT_DOUBLE_EQ(welch({5}, {6, 6}).p, 1.0);  // not testable
}

TEST(Power, SmallestDetectableChange) {
  // n = 3 a side, sd 1, mean 100: (t_.975,4 + t_.8,4) · sqrt(2/3) = (2.7764 + 0.9410) · 0.8165 = 3.035 %.
  EXPECT_NEAR(minimum_detectable_change_pct({99, 100, 101}, {199, 200, 201}, 0.05, 0.8), 3.035, 0.01);
  // More runs detect smaller changes; a stricter alpha needs larger ones.
  double n3 = minimum_detectable_change_pct({99, 100, 101}, {99, 100, 101}, 0.05, 0.8);
  double n6 = minimum_detectable_change_pct({99, 100, 101, 99, 100, 101}, {99, 100, 101, 99, 100, 101}, 0.05, 0.8);
  EXPECT_LT(n6, n3);
  EXPECT_GT(minimum_detectable_change_pct({99, 100, 101}, {99, 100, 101}, 0.01, 0.8), n3);
  EXPECT_DOUBLE_EQ(minimum_detectable_change_pct({1}, {1, 2}, 0.05, 0.8), 0.0);
}

TEST(Decision, ImprovedWhenEveryMetricImprovesBeyondNoise) {
  auto ch = e2e_change(runs({1000, 1010, 995}, {5.0, 4.9, 5.1}), runs({1200, 1190, 1210}, {4.2, 4.1, 4.2}), 0.05, 0.8);
  EXPECT_NEAR(ch["output_throughput"].change_pct, 19.80, 0.01);
  EXPECT_TRUE(*ch["tpot_mean_ms"].better);
  EXPECT_GT(ch["output_throughput"].mde_pct, 0);
  auto d = e2e_decision(ch, {"output_throughput", "tpot_mean_ms"}, {});
  ASSERT_TRUE(std::holds_alternative<std::string>(d)) << std::get<stop_reason>(d).message;
  EXPECT_EQ(std::get<std::string>(d), "improved");
  EXPECT_FALSE(ch["ttft_mean_ms"].tested);
}

TEST(Decision, WithinNoise) {
  auto ch = e2e_change(runs({1000, 1100, 950}, {5, 5, 5}), runs({1020, 1080, 990}, {5, 5, 5}), 0.05, 0.8);
  auto d = e2e_decision(ch, {"output_throughput"}, {});
  ASSERT_TRUE(std::holds_alternative<stop_reason>(d));
  EXPECT_EQ(std::get<stop_reason>(d).code, "e2e_within_noise");
  EXPECT_NE(std::get<stop_reason>(d).message.find("smallest detectable change"), std::string::npos);
}

TEST(Decision, ASecondMetricWithinNoiseBlocksTheClaim) {
  auto ch = e2e_change(runs({1000, 1010, 995}, {5.0, 5.5, 4.6}), runs({1200, 1190, 1210}, {4.9, 5.4, 4.7}), 0.05, 0.8);
  auto d = e2e_decision(ch, {"output_throughput", "tpot_mean_ms"}, {});
  ASSERT_TRUE(std::holds_alternative<stop_reason>(d));
  EXPECT_EQ(std::get<stop_reason>(d).code, "e2e_within_noise");
  EXPECT_TRUE(std::holds_alternative<std::string>(e2e_decision(ch, {"output_throughput"}, {})));
}

TEST(Decision, RegressionIsReported) {
  auto ch = e2e_change(runs({1000, 1010, 995}, {5, 5, 5}), runs({900, 905, 898}, {5, 5, 5}), 0.05, 0.8);
  auto d = e2e_decision(ch, {"output_throughput"}, {});
  ASSERT_TRUE(std::holds_alternative<stop_reason>(d));
  EXPECT_EQ(std::get<stop_reason>(d).code, "e2e_regression");
  EXPECT_LT(ch["output_throughput"].change_pct, 0);
}

TEST(Decision, DisagreementWithResultsCompareCountsAsNoise) {
  auto ch = e2e_change(runs({1000, 1010, 995}, {5, 5, 5}), runs({1200, 1190, 1210}, {5, 5, 5}), 0.05, 0.8);
  external_verdict no{"throughput.output_throughput", "no_significant_change", "", false, 19.8};
  auto d = e2e_decision(ch, {"output_throughput"}, {{"output_throughput", no}});
  ASSERT_TRUE(std::holds_alternative<stop_reason>(d));
  EXPECT_EQ(std::get<stop_reason>(d).code, "e2e_within_noise");
  EXPECT_NE(std::get<stop_reason>(d).message.find("magpie results compare says within noise"), std::string::npos);
  external_verdict yes = no;
  yes.beyond_noise = true;
  EXPECT_TRUE(std::holds_alternative<std::string>(e2e_decision(ch, {"output_throughput"}, {{"output_throughput", yes}})));
}

TEST(Decision, UntestableMetric) {
  auto ch = e2e_change(runs({1000}, {5}), runs({1200, 1190}, {5, 5}), 0.05, 0.8);
  auto d = e2e_decision(ch, {"output_throughput"}, {});
  ASSERT_TRUE(std::holds_alternative<stop_reason>(d));
  EXPECT_EQ(std::get<stop_reason>(d).code, "e2e_within_noise");
}

TEST(Inputs, EachChangedPartIsNamed) {
  json workload = {{"client", {{"seed", 0}, {"num_prompts", 96}}}};
  json lens = {{200, 128}, {256, 128}};
  json model = {{"weights_sha256", "ab"}};
  fingerprint a = make_fingerprint(workload, lens, model);
  EXPECT_FALSE(check_inputs({a, a}, {a, make_fingerprint(workload, lens, model)}).has_value());
  json w2 = workload;
  w2["client"]["seed"] = 1;
  json l2 = {{201, 128}, {256, 128}};
  json m2 = {{"weights_sha256", "cd"}};
  for (auto [b, part] : std::vector<std::pair<fingerprint, std::string>>{
           {make_fingerprint(w2, lens, model), "workload"}, {make_fingerprint(workload, l2, model), "requests"},
           {make_fingerprint(workload, lens, m2), "model"}}) {
    auto s = check_inputs({a, a}, {a, b});
    ASSERT_TRUE(s.has_value()) << part;
    EXPECT_EQ(s->code, "inputs_changed");
    EXPECT_NE(s->message.find(part), std::string::npos) << s->message;
    EXPECT_NE(s->message.find("after run 1"), std::string::npos) << s->message;
  }
}

TEST(Prediction, ShareTimesSavedFraction) {
  json p = kernel_prediction_json(predict_kernel_gain(50, 2.0, 1.8, 2.2));
  EXPECT_NEAR(p["gpu_time_change_pct"].get<double>(), -25.0, 1e-9);
  EXPECT_NEAR(p["throughput_change_pct_if_gpu_bound"].get<double>(), 100.0 / 3.0, 1e-9);
  EXPECT_LT(p["gpu_time_change_pct_ci"][0].get<double>(), p["gpu_time_change_pct_ci"][1].get<double>());
  EXPECT_NEAR(predict_kernel_gain(3.75, 2.76, 2.74, 2.81).throughput_change_pct, 2.45, 0.01);
}

}  // namespace
}  // namespace magpie::optimize
