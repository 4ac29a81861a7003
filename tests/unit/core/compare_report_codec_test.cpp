// The one compare-report decoder (core/compare_report_codec.h): typed rows and verdicts, an
// unknown verdict word refused naming file and field, lenient rows (absent words: defaults).
#include <gtest/gtest.h>

#include "core/compare_report_codec.h"

using namespace magpie;

namespace {

json report() {
  json rows = json::array({{{"extra", {{"kernel_id", "base"}}}, {"outcome", "passed"}, {"correctness_method", "reference"},
                            {"timing", {{"samples", 40}, {"stats_ns", {{"median", 2000.0}}}}}},
                           {{"kernel_id", "cand"}, {"outcome", "incorrect"}, {"errors", {"mismatch", 7, "b", "c"}}}});
  json verdicts = json::array({{{"index", 0}, {"kernel_id", "base"}, {"verdict", "baseline"}, {"median_ns", 2000.0}},
                               {{"index", 1}, {"kernel_id", "cand"}, {"verdict", "faster"}, {"speedup_vs_baseline", 1.5},
                                {"ci_low", 1.4}, {"ci_high", 1.6}, {"confidence", 0.95}, {"interval_df", 3},
                                {"median_ns", nullptr}, {"reason", "r"}}});
  return {{"mode", "compare"}, {"results", {{"kernel_results", rows}, {"verdicts", verdicts}, {"reference", "ref"}}}};
}

}  // namespace

TEST(compare_report_codec, decodes_rows_and_verdicts) {
  auto r = decode_compare_report(report(), "compare_report.json");
  ASSERT_TRUE(r.ok()) << r.get_status().message();
  ASSERT_EQ(r->rows.size(), 2u);
  EXPECT_EQ(r->rows[0].kernel_id, "base");
  EXPECT_EQ(r->rows[0].basis, correctness_basis::reference);
  EXPECT_EQ(r->rows[0].median_ns, 2000.0);
  EXPECT_EQ(r->rows[0].samples, 40);
  EXPECT_EQ(r->rows[1].kernel_id, "cand");
  EXPECT_EQ(r->rows[1].outcome, kernel_outcome::incorrect);
  EXPECT_EQ(r->rows[1].basis, correctness_basis::none);
  EXPECT_EQ(r->rows[1].errors, (std::vector<std::string>{"mismatch", "7", "b"}));
  ASSERT_EQ(r->verdicts.size(), 2u);
  EXPECT_FALSE(r->verdicts[0].speedup.has_value());
  const verdict_record* c = find_verdict(*r, "cand");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, verdict_kind::faster);
  EXPECT_EQ(c->speedup, 1.5);
  EXPECT_EQ(c->confidence, 0.95);
  EXPECT_EQ(c->df, 3);
  EXPECT_FALSE(c->median_ns.has_value());
  EXPECT_EQ(c->reason, "r");
  EXPECT_EQ(r->reference, "ref");
  EXPECT_EQ(find_verdict(*r, "nope"), nullptr);
}

TEST(compare_report_codec, refuses_an_unknown_or_missing_verdict_naming_file_and_field) {
  json rep = report();
  rep["results"]["verdicts"][1]["verdict"] = "quicker";
  auto r = decode_compare_report(rep, "out/compare_report.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.get_status().message().find("out/compare_report.json: field 'results.verdicts[1].verdict'"), std::string::npos)
      << r.get_status().message();
  EXPECT_NE(r.get_status().message().find("quicker"), std::string::npos);
  rep["results"]["verdicts"][1].erase("verdict");
  EXPECT_FALSE(decode_compare_report(rep, "x").ok());
  rep = report();
  rep["results"]["verdicts"][1]["ci_low"] = "low";
  auto typed = decode_compare_report(rep, "x");
  ASSERT_FALSE(typed.ok());
  EXPECT_NE(typed.get_status().message().find("'results.verdicts[1].ci_low'"), std::string::npos) << typed.get_status().message();
}

TEST(compare_report_codec, a_report_that_measured_nothing_is_empty) {
  for (const json& j : {json::object(), json{{"results", json::array()}}, json{{"results", {{"verdicts", 3}}}}}) {
    auto r = decode_compare_report(j, "x");
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->rows.empty());
    EXPECT_TRUE(r->verdicts.empty());
    EXPECT_FALSE(r->reference.has_value());
  }
}
