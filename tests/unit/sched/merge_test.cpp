// Merging job results into one compare report: rows in request order, verdicts of the timing
// job mapped back to request indices, failed/timed-out/cancelled jobs reported, inputs checked.
#include "sched/merge.h"

#include <gtest/gtest.h>

#include "sched/batch.h"

using namespace magpie;
using namespace magpie::kernel;
using namespace magpie::sched;

namespace {

const json k_seeds = {11, 22, 33};

json row(const std::string& id, bool ok, double median_ns = 0) {
  json r = {{"compiling_state", "SUCCESS"},
            {"correctness_state", ok ? "SUCCESS" : "FAILED"},
            {"performance_state", median_ns > 0 ? "SUCCESS" : "SKIPPED"},
            {"errors", ok ? json::array() : json{"output c: 3 of 4099 elements differ"}},
            {"score", ok ? 1.0 : 0.5},
            {"extra", {{"kernel_id", id}, {"kernel_type", "HOST"}}},
            {"outcome", ok ? "passed" : "incorrect"},
            {"correctness_method", "outputs"},
            {"correctness", {{"seeds", k_seeds}}},
            {"timing", median_ns > 0 ? json{{"success", true}, {"samples", 10}, {"stats_ns", {{"median", median_ns}}}}
                                     : json(nullptr)}};
  return r;
}

struct fixture {
  eval_request req;
  batch b;
  fixture() {
    req.mode = kernel::run_mode::compare;
    for (const char* id : {"base", "fast", "wrong", "slow_job"}) {
      kernel_spec k;
      k.id = id;
      k.type = kernel_type::host;
      req.kernels.push_back(k);
    }
    req.correctness.seed = 5;
    req.output_dir = make_temp_dir("/tmp", "magpie_merge_").value();
    b = plan_kernel_batch(req, {}).value();
    for (auto& j : b.jobs) {
      j.job_id = std::to_string(10 + (&j - &b.jobs[0]));
      j.last.state = job_state::completed;
      j.last.exit_status = 0;
      j.last.nodes = "n1";
    }
  }
  void write(const std::string& job, const json& report, json extra = json::object()) {
    const job_record* j = b.find(job);
    fs::path rep = j->dir / "report.json";
    ASSERT_TRUE(write_json_file(rep, report).ok());
    extra["exit_code"] = 0;
    extra["report_file"] = rep.string();
    if (!extra.contains("node")) extra["node"] = "n1";
    ASSERT_TRUE(write_json_file(j->dir / "result.json", extra).ok());
  }
  void standard_jobs() {
    write("reference", {{"run_seed", 5}, {"seeds", k_seeds}, {"manifest_dir", "/m/ref"}, {"reference", row("base", true)}});
    write("k01_fast", {{"run_seed", 5}, {"external_reference", {{"manifest_dir", "/m/ref"}}}, {"results", {row("fast", true)}}});
    write("k02_wrong", {{"run_seed", 5}, {"external_reference", {{"manifest_dir", "/m/ref"}}}, {"results", {row("wrong", false)}}});
    job_record* slow = b.find("k03_slow_job");
    slow->last.state = job_state::timeout;
    slow->last.reason = "TimeLimit";
    slow->last.exit_status = -1;
    slow->last.exit_signal = 15;
  }
  void timing_job() {
    json verdicts = {{{"index", 0}, {"kernel_id", "base"}, {"verdict", "baseline"}, {"speedup_vs_baseline", 1.0},
                      {"ci_low", 1.0}, {"ci_high", 1.0}},
                     {{"index", 1}, {"kernel_id", "fast"}, {"verdict", "faster"}, {"speedup_vs_baseline", 2.0},
                      {"ci_low", 1.8}, {"ci_high", 2.2}}};
    json results = {{"kernel_results", {row("base", true, 200), row("fast", true, 100)}},
                    {"verdicts", verdicts},
                    {"rankings", {{1, 2.0}, {0, 1.0}}},
                    {"winner", 1},
                    {"winner_reason", "fastest candidate that is significantly faster than the baseline"}};
    write("timing", {{"mode", "compare"}, {"run_seed", 5}, {"results", results}},
          {{"timed_indices", {0, 1}}, {"node", "n7"}});
  }
};

}  // namespace

TEST(merge, compare_maps_timing_verdicts_and_reports_lost_jobs) {
  fixture f;
  f.standard_jobs();
  f.timing_job();
  auto m = merge_compare(f.b, f.req, "20260101_000000");
  const json& r = m.report["results"];
  EXPECT_EQ(r["comparison_metrics"]["correctness"], json({true, true, false, false}));
  EXPECT_EQ(r["verdicts"][1]["verdict"], "faster");
  EXPECT_EQ(r["verdicts"][1]["index"], 1);
  EXPECT_EQ(r["verdicts"][2]["verdict"], "not_ranked");
  EXPECT_EQ(r["verdicts"][3]["verdict"], "not_ranked");
  EXPECT_EQ(r["rankings"], json({{1, 2.0}, {0, 1.0}}));
  EXPECT_EQ(r["winner"], 1);
  EXPECT_EQ(r["comparison_metrics"]["perf_scores"], json({1.0, 2.0, nullptr, nullptr}));
  const json& lost = r["kernel_results"][3];
  EXPECT_EQ(lost["outcome"], "timeout");
  EXPECT_EQ(lost["job_state"], "TIMEOUT");
  EXPECT_NE(lost["errors"][0].get<std::string>().find("ended TIMEOUT (TimeLimit), signal 15"), std::string::npos)
      << lost["errors"][0];
  EXPECT_EQ(r["kernel_results"][1]["timing"]["stats_ns"]["median"], 100);  // the timing job's row
  EXPECT_EQ(r["kernel_results"][1]["jobs"]["correctness"]["name"], "k01_fast");
  EXPECT_EQ(m.report["summary"][1]["kernel_time_median_us"], 0.1);
  const json& s = m.report["scheduler"];
  EXPECT_TRUE(s["timing_interleaved"].get<bool>());
  EXPECT_EQ(s["timing"]["node"], "n7");
  EXPECT_TRUE(s["inputs"]["identical"].get<bool>());
  EXPECT_EQ(s["job_states"]["TIMEOUT"], 1);
  EXPECT_EQ(m.report["run_seed"], 5);
  EXPECT_EQ(r["reference"], "base");
  EXPECT_NE(r["summary"].get<std::string>().find("Correctness: 2/4 passed"), std::string::npos);
  EXPECT_EQ(m.exit_code, 0);
}

TEST(merge, failed_timing_job_leaves_everything_unranked) {
  fixture f;
  f.standard_jobs();
  job_record* t = f.b.find("timing");
  t->last.state = job_state::cancelled;
  t->last.exit_status = -1;
  auto m = merge_compare(f.b, f.req, "20260101_000000");
  const json& r = m.report["results"];
  EXPECT_EQ(r["verdicts"][0]["verdict"], "baseline");
  EXPECT_EQ(r["verdicts"][1]["verdict"], "not_ranked");
  EXPECT_NE(r["verdicts"][1]["reason"].get<std::string>().find("CANCELLED"), std::string::npos) << r["verdicts"][1];
  EXPECT_EQ(r["rankings"], json::array());
  EXPECT_EQ(r["winner"], 0);  // as a local compare without timing
  EXPECT_FALSE(m.report["scheduler"]["timing_interleaved"].get<bool>());
}

TEST(merge, different_trial_seeds_are_caught) {
  fixture f;
  f.standard_jobs();
  json bad = row("fast", true);
  bad["correctness"]["seeds"] = {1, 2, 3};
  f.write("k01_fast", {{"run_seed", 5}, {"results", {bad}}});
  f.write("k02_wrong", {{"run_seed", 6}, {"results", {row("wrong", false)}}});
  auto m = merge_compare(f.b, f.req, "20260101_000000");
  const json& in = m.report["scheduler"]["inputs"];
  EXPECT_FALSE(in["identical"].get<bool>());
  EXPECT_EQ(in["problems"].size(), 2u) << in;
  EXPECT_FALSE(m.report["results"]["comparison_metrics"]["correctness"][1].get<bool>());
}

TEST(merge, analyze_rows_in_order_and_exit_code) {
  fixture f;
  f.req.mode = kernel::run_mode::analyze;
  f.b.mode = batch_mode::analyze;
  f.standard_jobs();
  // analyze batches without a separate reference have no baseline row from the reference job
  auto m = merge_analyze(f.b, f.req, "20260101_000000");
  ASSERT_EQ(m.report["results"].size(), 4u);
  EXPECT_EQ(m.report["results"][1]["extra"]["kernel_id"], "fast");
  EXPECT_EQ(m.report["results"][3]["outcome"], "timeout");
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_FALSE(m.report["scheduler"]["timing"]["interleaved"].get<bool>());
}

// Files written by jobs are read field by field: a mistyped or out-of-range field in the timing
// job's result or report leaves the batch untimed with a note naming it, never an exception.
TEST(merge, malformed_timing_files_become_a_note) {
  struct bad_case {
    json result_extra;
    json results;
    const char* note_part;
  };
  json good_rows = {row("base", true, 200), row("fast", true, 100)};
  json verdicts = {{{"verdict", "baseline"}}, {{"verdict", "faster"}, {"speedup_vs_baseline", 2.0}}};
  std::vector<bad_case> cases = {
      {{{"timed_indices", "0,1"}}, {{"kernel_results", good_rows}, {"verdicts", verdicts}},
       "field 'timed_indices': expected a list of integers, got string"},
      {{{"timed_indices", {0, 9}}}, {{"kernel_results", good_rows}, {"verdicts", verdicts}},
       "timed_indices do not name the request's kernels"},
      {{{"timed_indices", {0, 1}}}, {{"kernel_results", good_rows}},
       "field 'results.verdicts' is missing"},
      {{{"timed_indices", {0, 1}}},
       {{"kernel_results", good_rows}, {"verdicts", {verdicts[0], {{"verdict", "quicker"}, {"speedup_vs_baseline", 2.0}}}}},
       "field 'results.verdicts[1].verdict': unknown verdict 'quicker'"},
      {{{"timed_indices", {0, 1}}},
       {{"kernel_results", good_rows}, {"verdicts", {verdicts[0], {{"verdict", "faster"}, {"speedup_vs_baseline", "2x"}}}}},
       "field 'results.verdicts[1].speedup_vs_baseline': expected a number"},
      {{{"timed_indices", {0, 1}}}, {{"kernel_results", good_rows}, {"verdicts", {verdicts[0], 3}}},
       "field 'results.verdicts[1]' must be an object"},
  };
  for (const auto& c : cases) {
    fixture f;
    f.standard_jobs();
    f.write("timing", {{"mode", "compare"}, {"run_seed", 5}, {"results", c.results}}, c.result_extra);
    auto m = merge_compare(f.b, f.req, "20260101_000000");
    const json& timing = m.report["scheduler"]["timing"];
    EXPECT_FALSE(timing["interleaved"].get<bool>());
    EXPECT_NE(json_string(timing, "note").find(c.note_part), std::string::npos) << timing.dump();
    EXPECT_EQ(m.report["results"]["verdicts"][1]["verdict"], "not_ranked");
    EXPECT_EQ(m.report["results"]["winner"], 0);  // the correct baseline
  }
}

TEST(merge, rows_with_mistyped_states_read_as_not_correct) {
  fixture f;
  f.standard_jobs();
  json odd = row("fast", true);
  odd["correctness_state"] = 1;  // not a state word
  odd["extra"] = "not an object";
  f.write("k01_fast", {{"run_seed", 5}, {"external_reference", {{"manifest_dir", "/m/ref"}}}, {"results", {odd}}});
  auto m = merge_analyze(f.b, f.req, "20260101_000000");
  EXPECT_EQ(m.report["summary"][1]["correctness_state"], "FAILED");
  EXPECT_EQ(m.report["summary"][1]["kernel_id"], "");
  EXPECT_EQ(m.exit_code, 1);
}

// Rankings and the winner are rebuilt from the verdicts by the same builder as a local compare
// (kernel/compare.h): what the timing report claims about them is not taken over.
TEST(merge, winner_comes_from_the_verdicts_like_a_local_compare) {
  fixture f;
  f.standard_jobs();
  json verdicts = {{{"verdict", "baseline"}, {"speedup_vs_baseline", 1.0}},
                   {{"verdict", "faster"}, {"speedup_vs_baseline", 2.0}, {"ci_low", 1.8}, {"ci_high", 2.2}}};
  json results = {{"kernel_results", {row("base", true, 200), row("fast", true, 100)}}, {"verdicts", verdicts},
                  {"rankings", json::array()}, {"winner", 0}, {"winner_reason", "claimed"}};
  f.write("timing", {{"mode", "compare"}, {"run_seed", 5}, {"results", results}}, {{"timed_indices", {0, 1}}});
  auto m = merge_compare(f.b, f.req, "20260101_000000");
  const json& r = m.report["results"];
  EXPECT_EQ(r["winner"], 1);
  EXPECT_EQ(r["winner_reason"], "fastest candidate that is significantly faster than the baseline");
  EXPECT_EQ(r["rankings"], json({{1, 2.0}, {0, 1.0}}));
  EXPECT_EQ(r["verdicts"][1]["interval_df"], 0);  // verdicts are written by verdict::to_json
}
