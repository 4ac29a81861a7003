// The one compare builder (kernel/compare.h): rankings, winner and metrics from typed verdicts,
// as used by the local compare and the merge of scale-out batches.
#include "kernel/compare.h"
#include "kernel/compare_printer.h"

#include <gtest/gtest.h>

using namespace magpie;
using namespace magpie::kernel;

namespace {

compare_kernel entry(int i, bool correct, verdict_kind kind, double speedup) {
  compare_kernel k;
  k.id = "k" + std::to_string(i);
  k.correct = correct;
  k.v.index = i;
  k.v.verdict = kind;
  k.v.speedup = k.v.ci_low = k.v.ci_high = speedup;
  k.not_ranked_why = correct ? "not timed" : "incorrect";
  return k;
}

}  // namespace

TEST(compare_result, fastest_significantly_faster_candidate_wins) {
  auto r = build_compare_result({entry(0, true, verdict_kind::baseline, 1.0), entry(1, true, verdict_kind::ambiguous, 3.0),
                                 entry(2, true, verdict_kind::faster, 2.0), entry(3, true, verdict_kind::faster, 1.5),
                                 entry(4, false, verdict_kind::not_ranked, 0), entry(5, true, verdict_kind::implausible, 9.0)},
                                0);
  EXPECT_EQ(r.winner, 2);  // 1 is faster on the median but its interval is ambiguous
  EXPECT_EQ(r.winner_reason, "fastest candidate that is significantly faster than the baseline");
  ASSERT_EQ(r.rankings.size(), 4u);  // not_ranked and implausible never rank
  EXPECT_EQ(r.rankings[0].first, 1);
  EXPECT_EQ(r.rankings[3].first, 0);
  json results;
  write_compare_result(r, 0.95, results);
  EXPECT_EQ(results["winner"], 2);
  EXPECT_EQ(results["baseline_index"], 0);
  EXPECT_FALSE(results["comparison_metrics"]["all_correct"].get<bool>());
  EXPECT_TRUE(results["comparison_metrics"]["perf_scores"][4].is_null());
  EXPECT_TRUE(results["comparison_metrics"]["perf_scores"][5].is_null());
  EXPECT_EQ(results["verdicts"][5]["verdict"], "implausible");
  EXPECT_EQ(results["verdicts"][2]["confidence"], 0.95);
  EXPECT_EQ(results["rankings"][0], json({1, 3.0}));
}

TEST(compare_result, baseline_then_first_correct_kernel) {
  auto r = build_compare_result({entry(0, true, verdict_kind::baseline, 1.0), entry(1, true, verdict_kind::slower, 0.5)}, 0);
  EXPECT_EQ(r.winner, 0);
  EXPECT_EQ(r.winner_reason, "no correct candidate is significantly faster than the baseline");
  auto none = build_compare_result({entry(0, false, verdict_kind::not_ranked, 0), entry(1, true, verdict_kind::not_ranked, 0)}, 0);
  EXPECT_EQ(none.winner, 1);
  EXPECT_NE(none.winner_reason.find("first correct kernel"), std::string::npos);
  auto nobody = build_compare_result({entry(0, false, verdict_kind::not_ranked, 0)}, 0);
  EXPECT_EQ(nobody.winner, -1);
  EXPECT_NE(nobody.summary().find("Winner: none (no correct kernel)"), std::string::npos);
}

TEST(compare_result, a_rejected_measurement_never_wins) {
  auto rejected = [](compare_kernel k) { k.rejected = true; return k; };
  // The baseline's timing was rejected: nothing is ranked against it, nothing wins.
  auto r = build_compare_result({rejected(entry(0, true, verdict_kind::baseline, 1.0)), entry(1, true, verdict_kind::faster, 2.0)}, 0);
  EXPECT_EQ(r.winner, -1);
  EXPECT_NE(r.summary().find("Winner: none: the baseline's measurement was rejected"), std::string::npos);
  // A rejected candidate does not win, even as the first correct kernel.
  auto c = build_compare_result({entry(0, false, verdict_kind::not_ranked, 0), rejected(entry(1, true, verdict_kind::not_ranked, 0)),
                                 entry(2, true, verdict_kind::not_ranked, 0)}, 0);
  EXPECT_EQ(c.winner, 2);
}

TEST(compare_result, noise_beyond_100_percent_keeps_the_columns_apart) {
  // CI once printed "2.74 ms 104.29%": the golden's row pattern wants two spaces there.
  auto base = entry(0, true, verdict_kind::baseline, 1.0);
  base.median_ns = 2.74e6, base.noise = 1.0429, base.samples = 40;
  auto wild = entry(1, true, verdict_kind::ambiguous, 1.0);
  wild.median_ns = 2.04e6, wild.noise = 12.5, wild.samples = 40;
  const std::string s = build_compare_result({base, wild}, 0).summary();
  EXPECT_NE(s.find("2.74 ms  104.3%"), std::string::npos) << s;
  EXPECT_NE(s.find("2.04 ms   1250%"), std::string::npos) << s;
}

TEST(compare_result, summary_lines) {
  auto base = entry(0, true, verdict_kind::baseline, 1.0);
  base.median_ns = 12000, base.noise = 0.005, base.samples = 100;
  auto fast = entry(1, true, verdict_kind::faster, 2.0);
  fast.median_ns = 6000, fast.noise = 0.0125, fast.samples = 80;
  fast.note = " {job RUNNING}";
  auto bad = entry(2, false, verdict_kind::not_ranked, 0);
  bad.detail = "rejected: outputs differ";
  bad.expect_incorrect = true;
  auto r = build_compare_result({base, fast, bad, entry(3, false, verdict_kind::not_ranked, 0)}, 0);
  EXPECT_EQ(r.summary(),
            "Compared 4 kernel implementations\n\nCorrectness: 2/4 passed (1 incorrect on purpose, as its YAML expects)\n\n"
            "Results (speedup = median(baseline) / median(kernel); noise = relative stdev of the samples):\n"
            "     # kernel      median   noise  samples  verdict\n"
            "  \u2713  0 k0        12.00 us   0.50%      100  baseline\n"
            "  \u2713  1 k1         6.00 us   1.25%       80  faster 2.000x (CI 2.000-2.000) {job RUNNING}\n"
            "  \u2717  2 k2               -       -        -  not ranked: incorrect (as expected: wrong on purpose)\n"
            "      rejected: outputs differ\n"
            "  \u2717  3 k3               -       -        -  not ranked: incorrect\n"
            "\nWinner: Kernel 1 (k1)\n");
  json results;
  write_compare_result(r, 0.95, results);
  EXPECT_FALSE(results["comparison_metrics"]["all_correct"].get<bool>());
  EXPECT_FALSE(results["comparison_metrics"]["as_expected"].get<bool>());  // k3 is wrong without saying so
  auto ok = build_compare_result({base, fast, bad}, 0);
  json r2;
  write_compare_result(ok, 0.95, r2);
  EXPECT_TRUE(r2["comparison_metrics"]["as_expected"].get<bool>());
}

TEST(compare_result, verdicts_read_back_from_a_report_or_name_the_field) {
  verdict v;
  v.index = 3;
  v.verdict = verdict_kind::same;
  v.speedup = 1.01;
  v.ci_low = 0.99;
  v.ci_high = 1.03;
  v.df = 4;
  v.reason = "why";
  json j = verdict_json(v, "k3", 0.95, 1234.5);
  auto back = decode_verdict(json_fields(j, "report.json", "results.verdicts[3]"));
  ASSERT_TRUE(back.ok()) << back.get_status().message();
  EXPECT_EQ(back->kernel_id, "k3");
  EXPECT_EQ(verdict_json(verdict_of(*back), "k3", 0.95, back->median_ns.value_or(0)), j);
  EXPECT_FALSE(back->same_band || back->power);  // none written: none read
  // Issue 36's keys (band, power, decide) survive the round trip.
  v.band = same_band{0.025, 0.02, 0.1, 0.0125, 4, "2x the measured A/A spread"};
  v.power = power_statement{0.03, 0.41, "a 3% difference would have been detected with probability 0.41"};
  v.decide = "≈9 processes per implementation (now 4) would decide it";
  json j2 = verdict_json(v, "k3", 0.95, 1234.5);
  auto back2 = decode_verdict(json_fields(j2, "report.json", "results.verdicts[3]"));
  ASSERT_TRUE(back2.ok() && back2->same_band && back2->power) << back2.get_status().message();
  EXPECT_EQ(back2->same_band->aa_processes, 4);
  EXPECT_DOUBLE_EQ(back2->power->probability, 0.41);
  EXPECT_EQ(verdict_json(verdict_of(*back2), "k3", 0.95, back2->median_ns.value_or(0)), j2);
  j["verdict"] = "quicker";
  auto bad = decode_verdict(json_fields(j, "report.json", "results.verdicts[3]"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.get_status().message().find("report.json: field 'results.verdicts[3].verdict'"), std::string::npos)
      << bad.get_status().message();
  j["verdict"] = "same";
  j["ci_low"] = "low";
  EXPECT_NE(decode_verdict(json_fields(j, "report.json")).get_status().message().find("'ci_low'"), std::string::npos);
}

// The MCP compare tool's output schema takes these properties: every key write() emits, and
// every key of a verdict object, is declared (and nothing else).
TEST(compare_result, schema_declares_exactly_what_write_emits) {
  auto r = build_compare_result({entry(0, true, verdict_kind::baseline, 1.0), entry(1, true, verdict_kind::faster, 2.0)}, 0);
  json results = json::object();
  write_compare_result(r, 0.95, results);
  json schema = compare_result_schema();
  auto keys = [](const json& obj) {
    std::vector<std::string> out;
    for (auto it = obj.begin(); it != obj.end(); ++it) out.push_back(it.key());
    return out;
  };
  EXPECT_EQ(keys(results), keys(schema["properties"]));
  const json& vs = schema["properties"]["verdicts"]["items"];
  EXPECT_EQ(keys(results["verdicts"][1]), keys(vs["properties"]));
  EXPECT_EQ(keys(results["comparison_metrics"]), keys(schema["properties"]["comparison_metrics"]["properties"]));
  EXPECT_EQ(vs["properties"]["verdict"]["enum"].size(), 7u);
  EXPECT_EQ(vs["properties"]["verdict"]["enum"][5], "not_ranked");
}

