// Kernel choice and the compare gate of the optimization loop: every stop reason and the
// happy path, on synthetic gap CSVs and compare reports.
#include <gtest/gtest.h>

#include "core/strings.h"
#include "optimize/decide.h"
#include "optimize/decide_codec.h"
#include "optimize/decide_printer.h"
#include "unit/optimize/test_config.h"

namespace magpie::optimize {
namespace {

const char* k_cols =
    "Name,Calls,Self CUDA total (us),Avg time (us),% Total,Input Shapes,kind,category,source_repo,source_file,notes,"
    "source_resolution,source_error";

struct row_spec {
  std::string name;
  double total;
  std::string kind = "triton_jit", res = "resolved", err, src;
};

std::string gap_csv(const std::vector<row_spec>& rows) {
  std::string out = "# Repository Path Mappings:\n# $LOOP_DIR=./examples/loop\n#\n" + std::string(k_cols) + "\n";
  for (const auto& r : rows)
    out += strprintf("\"%s\",10,%g,%g,%g,,%s,,,%s,,%s,%s\n", r.name.c_str(), r.total, r.total / 10, r.total / 10, r.kind.c_str(),
                     r.src.c_str(), r.res.c_str(), r.err.c_str());
  return out;
}

const row_spec k_nvjet{"nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT", 500, "nvjet", "unsupported", "closed_source_library"};
const row_spec k_aten{"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", 300, "aten_native",
                      "unresolved", "aten_native_source_not_found"};
const row_spec k_sumsq{"_rms_norm_sumsq_kernel", 200, "triton_jit", "resolved", "", "$LOOP_DIR/kernels_baseline.py:17"};
const row_spec k_rot{"_rotary_kernel", 150, "triton_jit", "resolved", "", "$LOOP_DIR/kernels_baseline.py:75"};

using conf_map = std::map<std::string, std::pair<std::optional<double>, std::vector<std::string>>>;

std::variant<size_t, stop_reason> choose(const std::vector<row_spec>& rows, std::vector<ranked_kernel>* out = nullptr,
                                         conf_map conf = {}) {
  static optimize_config cfg = test_config();
  auto parsed = read_gap_csv(gap_csv(rows));
  EXPECT_TRUE(parsed.ok()) << parsed.get_status().message();
  classify(*parsed, conf, cfg);
  if (out) *out = *parsed;
  return choose_kernel(*parsed);
}

std::string stop_code(const std::variant<size_t, stop_reason>& v) {
  return std::holds_alternative<stop_reason>(v) ? std::get<stop_reason>(v).code : std::string("(chosen)");
}

TEST(KernelChoice, SkipsExternalKernelsAboveTheFirstOfOurs) {
  std::vector<ranked_kernel> rows;
  auto v = choose({k_nvjet, k_aten, k_sumsq, k_rot}, &rows, {{k_sumsq.name, {1.0, {}}}});
  ASSERT_TRUE(std::holds_alternative<size_t>(v)) << stop_code(v);
  const ranked_kernel& r = rows[std::get<size_t>(v)];
  EXPECT_EQ(r.name, "_rms_norm_sumsq_kernel");
  EXPECT_EQ(r.op, "rms_norm");
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(r.file, "kernels_baseline.py");
  EXPECT_EQ(r.line, 17);
  EXPECT_EQ(rows[0].disposition, disposition::external);
  EXPECT_EQ(rows[1].disposition, disposition::external);
  EXPECT_DOUBLE_EQ(rows[0].total_us, 500);
}

TEST(KernelChoice, EveryUncertainMappingAboveTheChoiceStops) {
  row_spec amb{"_fused_thing_kernel", 400, "triton_jit", "unresolved", "triton_source_ambiguous"};
  EXPECT_EQ(stop_code(choose({k_nvjet, amb, k_sumsq})), "source_mapping_ambiguous");
  EXPECT_EQ(stop_code(choose({k_nvjet, k_sumsq}, nullptr, {{k_sumsq.name, {0.5, {}}}})), "source_mapping_low_confidence");
  row_spec missed{"_rotary_kernel", 250, "triton_jit", "unresolved", "triton_source_not_found"};
  EXPECT_EQ(stop_code(choose({k_nvjet, missed, k_sumsq})), "source_mapping_disagrees");
  row_spec other{"_some_other_kernel", 250, "triton_jit", "resolved", "", "$LOOP_DIR/elsewhere.py:3"};
  EXPECT_EQ(stop_code(choose({other, k_sumsq})), "source_mapping_disagrees");
  EXPECT_EQ(stop_code(choose({k_nvjet, k_aten})), "no_mappable_kernel");
}

TEST(KernelChoice, UncertainKernelsBelowTheChoiceDoNotMatter) {
  row_spec amb{"_fused_thing_kernel", 100, "triton_jit", "unresolved", "triton_source_ambiguous"};
  EXPECT_EQ(stop_code(choose({k_nvjet, k_sumsq, amb})), "(chosen)");
}

TEST(KernelChoice, TritonSuffixAndSourceParsing) {
  optimize_config cfg = test_config();
  std::string sym;
  EXPECT_EQ(cfg.op_of_kernel("_rotary_kernel_0d1d2d3d", &sym), "rotary");
  EXPECT_EQ(sym, "_rotary_kernel");
  EXPECT_EQ(cfg.op_of_kernel("_rotary_kernelx"), "");
  EXPECT_EQ(parse_source_file("$LOOP_DIR/sub/k.py:42"), (std::pair<std::string, int64_t>{"sub/k.py", 42}));
  EXPECT_EQ(parse_source_file(""), (std::pair<std::string, int64_t>{"", 0}));
}

TEST(KernelChoice, ConfidencesFromTraceSources) {
  json src = {{"kernels", {{{"name", "k1"}, {"confidence", 0.75}, {"candidates", {"a.py:1", "b.py:2"}}}, {{"name", "k2"}}}}};
  auto c = source_confidences(src);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_DOUBLE_EQ(*c["k1"].first, 0.75);
  EXPECT_EQ(c["k1"].second.size(), 2u);
  EXPECT_FALSE(c["k2"].first.has_value());
  EXPECT_TRUE(source_confidences(json::array()).empty());
}

json compare_report_json(std::vector<std::tuple<std::string, std::string, std::string, double, double, double>> cands,
                         const std::string& base_outcome = "passed", const std::string& reference = "rms_norm_eager",
                         const std::string& method = "outputs") {
  json kr = json::array(), ver = json::array();
  cands.insert(cands.begin(), {"rms_norm_baseline", base_outcome, "baseline", 1.0, 1.0, 1.0});
  for (const auto& [id, outcome, verdict, sp, lo, hi] : cands) {
    kr.push_back({{"extra", {{"kernel_id", id}}}, {"outcome", outcome}, {"correctness_method", method},
                  {"timing", {{"samples", 50}, {"stats_ns", {{"median", sp > 0 ? 4000.0 / sp : 0.0}}}}}, {"errors", json::array()}});
    json v = {{"kernel_id", id}, {"verdict", verdict}};
    if (sp > 0) v.update({{"speedup_vs_baseline", sp}, {"ci_low", lo}, {"ci_high", hi}});
    ver.push_back(v);
  }
  json res = {{"kernel_results", kr}, {"verdicts", ver}};
  if (!reference.empty()) res["reference"] = reference;
  return {{"mode", "compare"}, {"results", res}};
}

// What the loop passes choose_winner: the report through core's one compare-report decoder.
compare_report_record decoded(const json& report) {
  auto r = decode_compare_report(report, "compare_report.json");
  EXPECT_TRUE(r.ok()) << r.get_status().message();
  return r.ok() ? *r : compare_report_record{};
}

compare_report_record compare_report(std::vector<std::tuple<std::string, std::string, std::string, double, double, double>> cands,
                                     const std::string& base_outcome = "passed", const std::string& reference = "rms_norm_eager",
                                     const std::string& method = "outputs") {
  return decoded(compare_report_json(std::move(cands), base_outcome, reference, method));
}

op_config rms_op() {
  op_config op;
  op.name = "rms_norm";
  op.baseline_id = "rms_norm_baseline";
  op.candidates = {{"rms_norm_onepass", "onepass"}, {"rms_norm_bad", "bad"}, {"rms_norm_fast", "fast"}};
  return op;
}

TEST(Gate, TheFastestCorrectCandidateWins) {
  auto g = choose_winner(compare_report({{"rms_norm_onepass", "passed", "faster", 1.8, 1.7, 1.9},
                                         {"rms_norm_bad", "incorrect", "not_ranked", 0, 0, 0},
                                         {"rms_norm_fast", "passed", "faster", 2.4, 2.3, 2.5}}),
                         rms_op());
  ASSERT_FALSE(g.stop) << g.stop->message;
  ASSERT_TRUE(g.win);
  EXPECT_EQ(g.win->id, "rms_norm_fast");
  EXPECT_EQ(g.win->impl, "fast");
  EXPECT_DOUBLE_EQ(g.win->ci_low, 2.3);
  EXPECT_DOUBLE_EQ(*g.win->baseline_median_ns, 4000.0);
  EXPECT_EQ(gate_result_json(g)["winner"], "rms_norm_fast");
}

TEST(Gate, AnIncorrectCandidateNeverWins) {
  auto g = choose_winner(compare_report({{"rms_norm_onepass", "incorrect", "not_ranked", 0, 0, 0},
                                         {"rms_norm_bad", "failed", "not_ranked", 0, 0, 0}}),
                         rms_op());
  ASSERT_TRUE(g.stop);
  EXPECT_EQ(g.stop->code, "no_correct_candidate");
  EXPECT_FALSE(g.win);
}

TEST(Gate, NotFasterBeyondTheIntervalStops) {
  for (auto [verdict, sp, lo, hi] : std::vector<std::tuple<std::string, double, double, double>>{
           {"same", 1.01, 0.99, 1.03}, {"slower", 0.8, 0.79, 0.81}, {"ambiguous", 1.1, 0.95, 1.3},
           {"faster", 1.05, 1.0, 1.1}, {"implausible", 40.0, 39.0, 41.0}}) {
    auto g = choose_winner(compare_report({{"rms_norm_onepass", "passed", verdict, sp, lo, hi}}), rms_op());
    ASSERT_TRUE(g.stop) << verdict;
    EXPECT_EQ(g.stop->code, "no_faster_candidate") << verdict;
  }
}

// The stop message says what each correct candidate's verdict was: its word and interval, or,
// for one the compare did not rank (an integrity check rejected its timing), the compare's reason,
// never a bare "not_ranked 0.000".
TEST(Gate, TheStopMessageSaysWhyEachCandidateIsNotFaster) {
  json rep = compare_report_json({{"rms_norm_onepass", "passed", "ambiguous", 1.1, 0.95, 1.3},
                             {"rms_norm_fast", "passed", "not_ranked", 0, 0, 0}});
  const std::string why = "not timed: rejected: samples on fresh inputs take 2.07x as long as samples that repeat inputs "
                          "(467.45 vs 225.75 us): results are cached between calls";
  for (auto& v : rep["results"]["verdicts"]) {
    v["confidence"] = 0.95;
    if (v["kernel_id"] == "rms_norm_fast") v["reason"] = why;
  }
  auto g = choose_winner(decoded(rep), rms_op());
  ASSERT_TRUE(g.stop);
  EXPECT_EQ(g.stop->code, "no_faster_candidate");
  const std::string& m = g.stop->message;
  EXPECT_NE(m.find("rms_norm_onepass ambiguous 1.100x (95% CI 0.950-1.300)"), std::string::npos) << m;
  EXPECT_NE(m.find("rms_norm_fast not ranked: " + why), std::string::npos) << m;
  EXPECT_EQ(m.find("0.000"), std::string::npos) << m;
  EXPECT_EQ(gate_result_json(g)["kernels"][2]["reason"], why);

  candidate_result none;
  EXPECT_EQ(describe_verdict(none), "no verdict in the compare report");
  none.verdict = verdict_kind::not_ranked;
  EXPECT_EQ(describe_verdict(none), "not ranked: the compare gave no reason");
  candidate_result cpu{.verdict = verdict_kind::ambiguous, .speedup = 2.0, .ci_low = 1.9, .ci_high = 2.1,
                       .reason = "timed only by a timer inside the candidate's process (no CUPTI): 'faster' is not certified; ..."};
  EXPECT_NE(describe_verdict(cpu).find("'faster' not certified"), std::string::npos) << describe_verdict(cpu);
  candidate_result floor{.verdict = verdict_kind::implausible, .speedup = 40.0, .ci_low = 39.0, .ci_high = 41.0};
  EXPECT_EQ(describe_verdict(floor), "implausible 40.000x (95% CI 39.000-41.000), below the physical floor: never ranked");
}

TEST(Gate, CorrectnessUnproven) {
  std::vector<std::tuple<std::string, std::string, std::string, double, double, double>> good = {
      {"rms_norm_onepass", "passed", "faster", 1.8, 1.7, 1.9}};
  for (const compare_report_record& rep : {compare_report(good, "passed", ""), compare_report(good, "passed", "rms_norm_eager", "exit_code"),
                          compare_report(good, "incorrect")}) {
    auto g = choose_winner(rep, rms_op());
    ASSERT_TRUE(g.stop);
    EXPECT_EQ(g.stop->code, "correctness_unproven") << g.stop->message;
  }
  op_config other = rms_op();
  other.baseline_id = "not_there";
  EXPECT_EQ(choose_winner(compare_report(good), other).stop->code, "correctness_unproven");
}

TEST(Gate, NoCandidateInTheCompare) {
  auto g = choose_winner(compare_report({}), rms_op());
  ASSERT_TRUE(g.stop);
  EXPECT_EQ(g.stop->code, "no_candidates");
}

TEST(Stops, CategoriesAreTheGuidesWording) {
  EXPECT_EQ(stop_category("source_mapping_low_confidence"), "source mapping uncertain");
  EXPECT_EQ(stop_category("no_correct_candidate"), "correctness unproven");
  EXPECT_EQ(stop_category("e2e_within_noise"), "end-to-end gain within noise");
  EXPECT_EQ(stop_category("server_failed"), "infrastructure");
  stop_reason s{"inputs_changed", "m", {{"x", 1}}};
  EXPECT_EQ(stop_reason_json(s)["category"], "benchmark inputs changed");
}

}  // namespace
}  // namespace magpie::optimize
