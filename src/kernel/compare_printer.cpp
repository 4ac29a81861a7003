// JSON of a compare result (kernel/compare.h): the results keys of compare_report.json and their schema.
#include "kernel/compare_printer.h"

#include "core/json_schema.h"
#include "kernel/verdict.h"

namespace magpie::kernel {

json same_band_json(const same_band& b) {
  return {{"band", b.band},
          {"floor", b.floor},
          {"ceiling", b.ceiling},
          {"aa_sd", b.aa_sd},
          {"aa_processes", b.aa_processes},
          {"basis", b.basis}};
}

json power_statement_json(const power_statement& p) {
  return {{"difference", p.difference}, {"probability", p.probability}, {"statement", p.text}};
}

json verdict_json(const verdict& v, const std::string& id, double confidence, double median_ns) {
  return {{"index", v.index}, {"kernel_id", id}, {"verdict", verdict_kind_name(v.verdict)}, {"speedup_vs_baseline", v.speedup},
          {"ci_low", v.ci_low}, {"ci_high", v.ci_high}, {"confidence", confidence}, {"interval_df", v.df},
          {"median_ns", median_ns > 0 ? json(median_ns) : json(nullptr)}, {"reason", v.reason},
          {"same_band", v.band ? same_band_json(*v.band) : json(nullptr)},
          {"power", v.power ? power_statement_json(*v.power) : json(nullptr)},
          {"decide", v.decide.empty() ? json(nullptr) : json(v.decide)}};
}

void write_compare_result(const compare_result& cr, double confidence, json& results) {
  json correctness = json::array(), scores = json::array(), verdicts = json::array();
  bool all_correct = true, as_expected = true;
  for (const auto& k : cr.kernels) {
    all_correct = all_correct && k.correct;
    as_expected = as_expected && k.correct != k.expect_incorrect;
    correctness.push_back(k.correct);
    bool unscored = k.v.verdict == verdict_kind::not_ranked || k.v.verdict == verdict_kind::implausible;
    scores.push_back(unscored ? json(nullptr) : json(k.v.speedup));
    verdicts.push_back(verdict_json(k.v, k.id, confidence, k.median_ns));
  }
  results["comparison_metrics"] = {{"correctness", correctness}, {"all_correct", all_correct},
                                   {"as_expected", as_expected}, {"perf_scores", scores},
                                   {"perf_score_definition", "speedup vs the baseline: median(baseline)/median(kernel)"}};
  results["winner"] = cr.winner >= 0 ? json(cr.winner) : json(nullptr);
  results["winner_reason"] = cr.winner_reason;
  json r = json::array();
  for (const auto& [idx, sp] : cr.rankings) r.push_back({idx, sp});
  results["rankings"] = r;
  results["baseline_index"] = cr.baseline;
  results["verdicts"] = verdicts;
}

namespace {

json object_or_null(json s) {
  s["type"] = {"object", "null"};
  return s;
}

}  // namespace

json compare_result_schema() {
  using namespace schema;
  json verdict_word = words("baseline | faster | slower | same | ambiguous (by the interval) | not_ranked | implausible",
                            verdict_kind_names());
  json one_verdict = closed({{"index", typed("integer", "kernel index")},
                             {"kernel_id", typed("string", "kernel id")},
                             {"verdict", verdict_word},
                             {"speedup_vs_baseline", typed("number", "median(baseline) / median(kernel); 0 when not timed")},
                             {"ci_low", typed("number", "low end of the speedup's confidence interval")},
                             {"ci_high", typed("number", "high end of the speedup's confidence interval")},
                             {"confidence", typed("number", "confidence of the interval, e.g. 0.95")},
                             {"interval_df", typed("integer", "degrees of freedom of the interval")},
                             {"median_ns", typed_or_null("number", "median time per launch, ns (null: not timed)")},
                             {"reason", typed("string", "why this verdict")},
                             {"same_band", object_or_null(closed({{"band", typed("number", "half-width: speedups in 1 +- band are 'same'")},
                                                            {"floor", typed("number", "compare_policy.same_tolerance")},
                                                            {"ceiling", typed("number", "the most the band widens to")},
                                                            {"aa_sd", typed("number", "sd of the baseline's log process medians")},
                                                            {"aa_processes", typed("integer", "baseline processes")},
                                                            {"basis", typed("string", "how the band was chosen")}}))},
                             {"power", object_or_null(closed({{"difference", typed("number", "relative difference, e.g. 0.03")},
                                                        {"probability", typed("number", "chance it would have been called")},
                                                        {"statement", typed("string", "the power in words")}}))},
                             {"decide", typed_or_null("string", "ambiguous: what would decide it")}});
  json metrics = closed({{"correctness", list_of(typed("boolean", "correct"), "per kernel: correctness SUCCESS")},
                         {"all_correct", typed("boolean", "every kernel is correct")},
                         {"as_expected", typed("boolean", "every kernel is correct, except those whose YAML says "
                                                          "expect: incorrect, which are incorrect")},
                         {"perf_scores", list_of(typed_or_null("number", "speedup"), "per kernel: speedup, null when not ranked")},
                         {"perf_score_definition", typed("string", "what perf_scores mean")}});
  json ranking = list_of(typed("number", "kernel index, then its speedup"), "[kernel index, speedup vs the baseline]");
  json props = {{"comparison_metrics", metrics},
                {"winner", typed_or_null("integer", "index of the winner (null: no kernel is correct, or the baseline's measurement was rejected)")},
                {"winner_reason", typed("string", "why it won")},
                {"rankings", list_of(ranking, "ranked kernels, fastest first")},
                {"baseline_index", typed("integer", "index of the baseline")},
                {"verdicts", list_of(one_verdict, "per kernel, vs the baseline")}};
  return {{"type", "object"}, {"properties", props}};
}

}  // namespace magpie::kernel
