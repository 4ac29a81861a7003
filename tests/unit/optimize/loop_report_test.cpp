// The loop report as data (optimize/loop_report.h): decoded once from the loop's document, state
// words refused when unknown, printed by optimize/report_printer.h.
#include <gtest/gtest.h>

#include "optimize/loop_report_codec.h"
#include "optimize/report_printer.h"

namespace magpie::optimize {
namespace {

json finished_doc() {
  return json::parse(R"({
    "schema": "magpie-optimize-1", "name": "t", "benchmark": {"concurrency": 4},
    "steps": {"start_server": {"status": "ok", "seconds": 1.5, "resumed": true},
              "e2e": {"status": "stopped", "seconds": 20.25}},
    "stop": {"code": "e2e_within_noise", "message": "the change is within noise", "details": {}},
    "outcome": "stopped", "num_prompts": 64, "control_result": "passed: within noise",
    "warmups": {"baseline": {"num_prompts": 64, "duration_s": 3.25}},
    "initial_runs": [{"metrics": {"output_throughput": 100.0, "tpot_mean_ms": 5.0}}],
    "baseline_runs": [{"server": "A1", "workspace": "/w/a0", "metrics": {"output_throughput": 101.0, "tpot_mean_ms": 4.5}},
                      {"server": "A2", "workspace": "/w/a1", "metrics": {"output_throughput": 99.0}}],
    "after_runs": [{"server": "B1", "workspace": "/w/b0", "metrics": {"output_throughput": 102.0, "tpot_mean_ms": 4.25}}],
    "design": {"order": "ABBA", "servers": "fresh", "sequence": ["A", "B", "B", "A"], "pairs": 2, "server_starts": 4,
               "budget_stop": "out of time"},
    "ranking": [{"rank": 1, "name": "k|1", "calls": 10, "total_us": 12.5, "pct_total": 40.0, "disposition": "ours", "why": "ok"}],
    "chosen": {"kernel": "k|1", "rank": 1, "op": "rms_norm", "file": "k.py", "line": 17, "pct_total": 40.0, "confidence": 0.95},
    "kernel": {"baseline_id": "rms_norm_baseline", "reference": null,
               "kernels": [{"id": "a", "outcome": "passed", "verdict": "faster", "speedup": 1.5, "ci_low": 1.4, "ci_high": 1.6,
                            "median_ns": 1500, "reason": "x"},
                           {"id": "b", "outcome": "incorrect", "verdict": "", "reason": "wrong | values"}],
               "winner": "a", "impl": "onepass", "speedup": 1.5, "ci_low": 1.4, "ci_high": 1.6},
    "e2e": {"metrics": {"output_throughput": {"tested": true, "before_mean": 100, "before_std": 1, "before_min": 99,
                                               "before_max": 101, "after_mean": 102, "after_std": 1, "after_min": 101,
                                               "after_max": 103, "change_pct": 2, "p_value": 0.2, "beyond_noise": false,
                                               "mde_pct": 3}}},
    "prediction": {"op_share_of_gpu_time_pct": 10, "kernel_speedup": 1.5, "gpu_time_change_pct": -3.33,
                   "throughput_change_pct_if_gpu_bound": 3.45, "measured_change_pct": 2}
  })");
}

TEST(loop_report, decodes_the_document_once) {
  auto r = decode_loop_report(finished_doc(), "loop_report.json");
  ASSERT_TRUE(r.ok()) << r.get_status().message();
  EXPECT_EQ(r->outcome, loop_result::stopped);
  ASSERT_TRUE(r->baseline_runs.has_value());
  EXPECT_EQ(r->baseline_runs->size(), 2u);
  EXPECT_FALSE((*r->baseline_runs)[1].tpot_mean_ms.has_value());
  ASSERT_TRUE(r->kernel && r->kernel->win);
  EXPECT_EQ(r->kernel->win->id, "a");
  EXPECT_EQ(r->kernel->kernels[0].verdict, verdict_kind::faster);
  EXPECT_FALSE(r->kernel->kernels[1].verdict.has_value());
  EXPECT_EQ(r->kernel->kernels[1].outcome, kernel_outcome::incorrect);
  EXPECT_EQ(r->ranking.at(0).disposition, disposition::ours);
  EXPECT_TRUE(r->e2e.at("output_throughput").tested);
  ASSERT_EQ(r->steps.size(), 2u);
  EXPECT_EQ(r->steps[0].name, "start_server");
  EXPECT_TRUE(r->steps[0].resumed);
}

TEST(loop_report, unknown_state_words_are_refused_naming_file_and_field) {
  json d = finished_doc();
  d["outcome"] = "improvd";
  auto r = decode_loop_report(d, "/w/loop_report.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.get_status().message().find("/w/loop_report.json: field 'outcome': unknown word 'improvd'"), std::string::npos)
      << r.get_status().message();
  d = finished_doc();
  d["kernel"]["kernels"][0]["verdict"] = "quicker";
  r = decode_loop_report(d, "f.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.get_status().message().find("field 'kernel.kernels[0].verdict'"), std::string::npos);
  d = finished_doc();
  d["ranking"][0]["disposition"] = "mine";
  EXPECT_FALSE(decode_loop_report(d, "f.json").ok());
  EXPECT_EQ(parse_loop_result("paused"), loop_result::paused);
  EXPECT_STREQ(loop_result_name(loop_result::improved), "improved");
}

TEST(loop_report, the_summary_table_prints_every_row) {
  auto r = decode_loop_report(finished_doc(), "loop_report.json");
  ASSERT_TRUE(r.ok());
  std::string t = summary_table(*r);
  EXPECT_NE(t.find("outcome                     stopped (passed: within noise)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("prompts per run             64 (concurrency 4)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("warm-up passes (discarded)  baseline 64 req in 3.25 s\n"), std::string::npos) << t;
  EXPECT_NE(t.find("measurement design          ABBA, servers fresh, 2 pairs, 4 server starts\n"), std::string::npos) << t;
  EXPECT_NE(t.find("baseline output tok/s       100.00 ± 1.00 (99.00–101.00)\n"), std::string::npos) << t;
  // no tested TPOT in the e2e block: the baseline runs (not the initial ones) stand in
  EXPECT_NE(t.find("baseline TPOT ms            4.50 ± 0.00 (4.50–4.50, n=1)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("kernel speedup              a: 1.500x (95% CI 1.400–1.600) vs rms_norm_baseline\n"), std::string::npos) << t;
  EXPECT_NE(t.find("e2e change (throughput)     +2.00%, p=0.2, within noise (smallest detectable 3.00%)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("stop reason                 e2e_within_noise: the change is within noise\n"), std::string::npos) << t;
  json d = finished_doc();
  d.erase("stop");
  d["outcome"] = "failed";
  d["error"] = "benchmark_failed: no server";
  r = decode_loop_report(d, "loop_report.json");
  ASSERT_TRUE(r.ok());
  EXPECT_NE(summary_table(*r).find("stop reason                 step failed: benchmark_failed: no server\n"), std::string::npos);
}

TEST(loop_report, the_markdown_lists_candidates_runs_and_steps) {
  auto r = decode_loop_report(finished_doc(), "loop_report.json");
  ASSERT_TRUE(r.ok());
  std::string md = report_markdown(*r);
  EXPECT_NE(md.find("| 1 | `k/1` | 10 | 12.5 | 40.00 | ours | ok |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("correctness gate vs -)"), std::string::npos) << md;
  EXPECT_NE(md.find("| a | passed | faster | 1.500 | 1.400–1.600 | 1.50 |  |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| b | incorrect |  | - | -–- | - | wrong / values |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("Order of runs: A B B A\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1 | A (baseline) | A2 | 99.00 | - | /w/a1 |\n| 0 | B (candidate) | B1 | 102.00 | 4.250 | /w/b0 |\n"),
            std::string::npos) << md;
  EXPECT_NE(md.find("\nTime budget: out of time\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| start_server | ok (resumed) | 1.50 |\n| e2e | stopped | 20.25 |\n"), std::string::npos) << md;
}

}  // namespace
}  // namespace magpie::optimize
