// The loop report as data (optimize/loop_report.h): one codec writes and reads it
// (optimize/loop_report_codec.h), byte for byte on reports the loop wrote (tests/unit/optimize/data:
// golden.loop_cpu_dry_run's first run and its resumed A/A control, paths shortened), refusing
// unknown, missing and mistyped fields and unknown state words with the file and field named;
// optimize/report_printer.h prints the summary table and loop_report.md from it.
#include <gtest/gtest.h>

#include "optimize/loop_report_codec.h"
#include "optimize/report_printer.h"

namespace magpie::optimize {
namespace {

std::string data_file(const char* name) {
  return (fs::path(MAGPIE_TEST_SOURCE_DIR) / "tests/unit/optimize/data" / name).string();
}

json data_doc(const char* name) { return read_json_file(data_file(name)).value(); }

/// decode(doc) → encode, as the file's bytes.
std::string round_trip(const json& doc, const std::string& where) {
  auto r = decode_loop_report(doc, where);
  EXPECT_TRUE(r.ok()) << r.get_status().message();
  return r.ok() ? dump_pretty(loop_report_json(*r)) : std::string();
}

/// The decode error of `doc` ("" when it decodes).
std::string refusal(const json& doc) {
  auto r = decode_loop_report(doc, "/w/loop_report.json");
  return r.ok() ? std::string() : r.get_status().message();
}

TEST(loop_report_codec, a_real_report_round_trips_byte_for_byte) {
  for (const char* name : {"loop_report_loop.json", "loop_report_aa.json"}) {
    const std::string text = read_file(data_file(name)).value();
    const std::string once = round_trip(parse_json(text).value(), name);
    EXPECT_EQ(once, text) << name;  // encode(decode(file)) is the file
    EXPECT_EQ(round_trip(parse_json(once).value(), name), once) << name;
  }
}

TEST(loop_report_codec, the_decoded_report_holds_every_block) {
  auto r = decode_loop_report(data_doc("loop_report_aa.json"), "aa.json");
  ASSERT_TRUE(r.ok()) << r.get_status().message();
  EXPECT_EQ(r->outcome, loop_result::stopped);
  ASSERT_TRUE(r->stop && r->resumed && r->design && r->switched && r->power && r->e2e);
  EXPECT_EQ(r->stop->code, "e2e_within_noise");
  EXPECT_EQ(r->resumed->from_step, "switch_in");
  EXPECT_EQ(r->resumed->kept.size(), 7u);
  ASSERT_NE(r->step("compare"), nullptr);
  EXPECT_TRUE(r->step("compare")->resumed);
  EXPECT_EQ(r->step("e2e")->status, step_status::stopped);
  EXPECT_EQ(r->design->sequence.size(), 6u);
  EXPECT_TRUE(r->design->power.budget_stop.has_value());
  EXPECT_TRUE(r->switched->baseline_server.has_value());  // concurrent servers
  EXPECT_FALSE(r->power->reached);
  ASSERT_TRUE(r->e2e->results_compare.has_value());
  EXPECT_EQ(r->e2e->results_compare->front().second.name, "throughput.output_throughput");
  ASSERT_TRUE(r->kernel && r->kernel->win);
  EXPECT_EQ(r->kernel->kernels.front().verdict, verdict_kind::baseline);
  ASSERT_TRUE(r->analysis);
  EXPECT_FALSE(r->analysis->summary.stages.empty());
  EXPECT_FALSE(r->commands.empty());
  EXPECT_TRUE(r->commands.back().in_process);  // results_compare
  ASSERT_TRUE(r->after_runs && !r->after_runs->empty());
  EXPECT_GT(r->after_runs->front().metrics.at("output_throughput"), 0);
  EXPECT_EQ(r->after_runs->front().fp.parts.size(), 3u);
}

TEST(loop_report_codec, a_corrupted_field_is_refused_naming_file_and_field) {
  const json good = data_doc("loop_report_loop.json");
  ASSERT_EQ(refusal(good), "");
  json d = good;
  d["outcome"] = "improvd";
  EXPECT_NE(refusal(d).find("/w/loop_report.json: field 'outcome': unknown word 'improvd'"), std::string::npos) << refusal(d);
  d = good;
  d["kernel"]["kernels"][0]["verdict"] = "quicker";
  EXPECT_NE(refusal(d).find("/w/loop_report.json: field 'kernel.kernels[0].verdict': unknown word 'quicker'"), std::string::npos)
      << refusal(d);
  d = good;
  d["ranking"][0]["disposition"] = "mine";
  EXPECT_NE(refusal(d).find("field 'ranking[0].disposition': unknown word 'mine'"), std::string::npos) << refusal(d);
  d = good;
  d["after_runs"][1].erase("fingerprint");
  EXPECT_NE(refusal(d).find("/w/loop_report.json: field 'after_runs[1].fingerprint': missing"), std::string::npos) << refusal(d);
  d = good;
  d["design"]["pairs"] = "three";
  EXPECT_NE(refusal(d).find("field 'design.pairs': wrong type"), std::string::npos) << refusal(d);
  d = good;
  d["steps"]["compare"]["status"] = "done";
  EXPECT_NE(refusal(d).find("field 'steps.compare.status': unknown word 'done'"), std::string::npos) << refusal(d);
  d = good;
  d["e2e"]["metrics"]["output_throughput"]["p"] = 0.5;
  EXPECT_NE(refusal(d).find("field 'e2e.metrics.output_throughput.p': unknown field"), std::string::npos) << refusal(d);
  d = good;
  d["commands"][0]["argv"] = "magpie trace";
  EXPECT_NE(refusal(d).find("field 'commands[0].argv': wrong type"), std::string::npos) << refusal(d);
  d = good;
  d["resumed_from"] = "x";
  EXPECT_NE(refusal(d).find("field 'resumed_from': unknown field"), std::string::npos) << refusal(d);
  EXPECT_EQ(parse_loop_result("paused"), loop_result::paused);
  EXPECT_STREQ(loop_result_name(loop_result::improved), "improved");
  EXPECT_EQ(parse_step_status("running"), step_status::running);
}

TEST(loop_report_codec, a_partial_report_decodes_and_writes_only_its_blocks) {
  // What resume may start from: a report of the first steps only (golden.loop_decide writes one).
  json d = {{"steps", {{"start_server", {{"status", "ok"}, {"seconds", 1.5}}}}},
            {"server_baseline", json::object()},
            {"num_prompts", 16},
            {"profile", {{"trace", "/t/a.pt.trace.json"}}},
            {"commands", json::array()}};
  auto r = decode_loop_report(d, "hand.json");
  ASSERT_TRUE(r.ok()) << r.get_status().message();
  EXPECT_EQ(r->num_prompts, 16);
  ASSERT_TRUE(r->profile);
  EXPECT_EQ(r->profile->trace, "/t/a.pt.trace.json");
  json out = loop_report_json(*r);
  EXPECT_EQ(dump_compact(out),
            R"({"steps":{"start_server":{"status":"ok","seconds":1.5}},"stop":null,"outcome":null,"commands":[],)"
            R"("server_baseline":{},"num_prompts":16,"profile":{"trace":"/t/a.pt.trace.json"}})");
}

/// A finished report, as the loop fills it (the printers' input).
loop_report finished_report() {
  loop_report r;
  r.steps = {{"start_server", step_status::ok, 1.5, std::nullopt, std::nullopt, true},
             {"e2e", step_status::stopped, 20.25, std::nullopt, std::nullopt, false}};
  r.stop = stop_reason{"e2e_within_noise", "the change is within noise", json::object()};
  r.outcome = loop_result::stopped;
  r.control_result = "passed: within noise";
  r.num_prompts = 64;
  r.benchmark = loop_benchmark{json::object(), 4, -1, 8, 15};
  r.warmups = std::vector<warmup_record>{{"baseline", "/w/warm", 64, 3.25, 19.5}};
  r.initial_runs = std::vector<run_record>{{"/w/i0", "u", "baseline", {{"output_throughput", 100.0}, {"tpot_mean_ms", 5.0}}, {}}};
  r.baseline_runs = std::vector<run_record>{{"/w/a0", "u", "A1", {{"output_throughput", 101.0}, {"tpot_mean_ms", 4.5}}, {}},
                                            {"/w/a1", "u", "A2", {{"output_throughput", 99.0}}, {}}};
  r.after_runs = std::vector<run_record>{{"/w/b0", "u", "B1", {{"output_throughput", 102.0}, {"tpot_mean_ms", 4.25}}, {}}};
  loop_design design{"ABBA", "fresh", {"A", "B", "B", "A"}, 2, 4, {}, 30, 0};
  design.power.budget_stop = "out of time";
  r.design = design;
  ranked_kernel k;
  k.rank = 1, k.name = "k|1", k.calls = 10, k.total_us = 12.5, k.pct_total = 40.0, k.disposition = disposition::ours, k.why = "ok";
  r.ranking = std::vector<ranked_kernel>{k};
  chosen_kernel ch;
  ch.kernel = "k|1", ch.rank = 1, ch.op = "rms_norm", ch.file = "k.py", ch.line = 17, ch.pct_total = 40.0, ch.confidence = 0.95;
  r.chosen = ch;
  gate_result g;
  g.baseline_id = "rms_norm_baseline";
  candidate_result a;
  a.id = "a", a.outcome = kernel_outcome::passed, a.verdict = verdict_kind::faster, a.speedup = 1.5, a.ci_low = 1.4, a.ci_high = 1.6;
  a.median_ns = 1500, a.reason = "x";
  candidate_result b;
  b.id = "b", b.outcome = kernel_outcome::incorrect, b.reason = "wrong | values";
  g.kernels = {a, b};
  g.win = winner{"a", "onepass", 1.5, 1.4, 1.6, std::nullopt, std::nullopt};
  r.kernel = g;
  metric_change m;
  m.tested = true, m.before_mean = 100, m.before_std = 1, m.before_min = 99, m.before_max = 101;
  m.after_mean = 102, m.after_std = 1, m.after_min = 101, m.after_max = 103, m.change_pct = 2, m.p_value = 0.2, m.mde_pct = 3;
  r.e2e = e2e_record{{{"output_throughput", m}}, "output_throughput", {"output_throughput"}, 0.05, std::nullopt, std::nullopt, std::nullopt};
  loop_prediction p;
  p.predicted.op_share_pct = 10, p.predicted.speedup = 1.5, p.predicted.gpu_time_change_pct = -3.33;
  p.predicted.throughput_change_pct = 3.45, p.measured_change_pct = 2;
  r.prediction = p;
  return r;
}

TEST(loop_report, the_summary_table_prints_every_row) {
  loop_report r = finished_report();
  std::string t = summary_table(r);
  EXPECT_NE(t.find("outcome                     stopped (passed: within noise)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("prompts per run             64 (concurrency 4)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("warm-up passes (discarded)  baseline 64 req in 3.25 s\n"), std::string::npos) << t;
  EXPECT_NE(t.find("measurement design          ABBA, servers fresh, 2 pairs, 4 server starts\n"), std::string::npos) << t;
  EXPECT_NE(t.find("baseline output tok/s       100.00 ± 1.00 (99.00–101.00)\n"), std::string::npos) << t;
  // no tested TPOT in the e2e block: the baseline runs (not the initial ones) stand in
  EXPECT_NE(t.find("baseline TPOT ms            4.50 ± 0.00 (4.50–4.50, n=1)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("chosen kernel               k|1 (#1, 40.00% of window, op rms_norm)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("source                      k.py:17 (confidence 0.95)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("kernel speedup              a: 1.500x (95% CI 1.400–1.600) vs rms_norm_baseline\n"), std::string::npos) << t;
  EXPECT_NE(t.find("e2e change (throughput)     +2.00%, p=0.2, within noise (smallest detectable 3.00%)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("kernel gain predicts        10.00% of GPU time x (1 - 1/1.500) = -3.33% GPU time; +3.45% throughput"),
            std::string::npos) << t;
  EXPECT_NE(t.find("stop reason                 e2e_within_noise: the change is within noise\n"), std::string::npos) << t;
  r.stop.reset();
  r.outcome = loop_result::failed;
  r.error = "benchmark_failed: no server";
  EXPECT_NE(summary_table(r).find("stop reason                 step failed: benchmark_failed: no server\n"), std::string::npos);
}

TEST(loop_report, the_markdown_lists_candidates_runs_and_steps) {
  std::string md = report_markdown(finished_report());
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

TEST(loop_report, the_markdown_of_a_real_report_matches_its_blocks) {
  auto r = decode_loop_report(data_doc("loop_report_loop.json"), "loop.json");
  ASSERT_TRUE(r.ok()) << r.get_status().message();
  std::string md = report_markdown(*r);
  EXPECT_NE(md.find("Chosen: `" + r->chosen->kernel + "` → `" + r->chosen->file + ":" + std::to_string(r->chosen->line) + "`"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| switch_in | ok | "), std::string::npos) << md;
  EXPECT_NE(summary_table(*r).find("measurement design          abba, servers restart, 3 pairs, 8 server starts\n"), std::string::npos)
      << summary_table(*r);
}

}  // namespace
}  // namespace magpie::optimize
