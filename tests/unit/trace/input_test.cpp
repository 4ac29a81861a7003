// Input health (no quiet failures), CSV encoding and rank discovery.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "core/csv.h"
#include "core/fs.h"
#include "core/utf8.h"
#include "trace/discovery.h"
#include "trace/gap_analysis.h"
#include "trace/health.h"
#include "trace/health_printer.h"
#include "trace/model.h"

namespace magpie::trace {
namespace {

class null_sink : public event_sink {
 public:
  void on_event(const event_view&) override {}
};

input_health read_health(std::string_view bytes) {
  null_sink s;
  return check_read(read_trace_bytes(bytes, s));
}

fs::path temp_dir(const char* tag) {
  fs::path d = fs::temp_directory_path() / ("magpie_input_test_" + std::string(tag) + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

const char* k_one_kernel =
    R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 5}]})";

TEST(InputHealth, HostileDocumentsAreUnusableWithAReason) {
  EXPECT_EQ(problem_text(read_health("").problems.at(0)), "the file is empty");
  EXPECT_EQ(read_health("").status, input_status::unusable);
  EXPECT_EQ(read_health("\x7f\x45\x4c\x46garbage").status, input_status::unusable);
  EXPECT_EQ(problem_text(read_health("[]").problems.at(0)), "the trace holds no events");
  EXPECT_EQ(read_health(R"({"schemaVersion": 1})").status, input_status::unusable);
  EXPECT_TRUE(read_health(k_one_kernel).ok());
}

TEST(InputHealth, MalformedEventsArePartialWithCounts) {
  input_health h = read_health(R"([{"ph":"X","cat":"kernel","name":"a","ts":null,"dur":1},
                                  {"ph":"X","cat":"kernel","name":"b","ts":1,"dur":"2"},
                                  {"ph":"X","cat":"kernel","name":"c","ts":1,"dur":-4}, 7])");
  EXPECT_EQ(h.status, input_status::partial);
  std::string all;
  for (const auto& p : problem_texts(h)) all += p + "\n";
  EXPECT_NE(all.find("1 element of traceEvents not an object"), std::string::npos) << all;
  EXPECT_NE(all.find("1 event has a \"ts\" that is not a number"), std::string::npos) << all;
  EXPECT_NE(all.find("1 event has a \"dur\" that is not a number"), std::string::npos) << all;
  EXPECT_NE(all.find("1 event has a negative \"dur\""), std::string::npos) << all;
}

TEST(InputHealth, ProblemsAreACounterTableWithSeverityCountAndFirstOffset) {
  // elements: 0 ok, 1 bad ts, 2 not an object, 3 bad dur, 4 bad ts again, 5 negative dur, 6 bad pid
  input_health h = read_health(R"([{"ph":"X","cat":"kernel","name":"a","ts":1,"dur":1},
                                  {"ph":"X","cat":"kernel","name":"b","ts":"x","dur":1}, 7,
                                  {"ph":"X","cat":"kernel","name":"c","ts":1,"dur":null},
                                  {"ph":"X","cat":"kernel","name":"d","ts":[],"dur":1},
                                  {"ph":"X","cat":"kernel","name":"e","ts":1,"dur":-4},
                                  {"ph":"X","cat":"kernel","name":"f","ts":1,"dur":1,"pid":{}}])");
  EXPECT_EQ(h.status, input_status::partial);
  auto row = [&](read_problem_kind k) -> const read_problem& {
    for (const auto& p : h.problems)
      if (p.kind == k) return p;
    ADD_FAILURE() << "no row of kind " << static_cast<int>(k);
    return h.problems.at(0);
  };
  EXPECT_EQ(row(read_problem_kind::bad_ts).count, 2u);
  EXPECT_EQ(row(read_problem_kind::bad_ts).first_offset, 1u);
  EXPECT_EQ(row(read_problem_kind::non_object_elements).first_offset, 2u);
  EXPECT_EQ(row(read_problem_kind::bad_dur).first_offset, 3u);
  EXPECT_EQ(row(read_problem_kind::negative_dur).first_offset, 5u);
  EXPECT_EQ(row(read_problem_kind::bad_other_fields).first_offset, 6u);
  for (const auto& p : h.problems) EXPECT_EQ(p.severity, input_status::partial);
  EXPECT_EQ(problem_text(row(read_problem_kind::bad_ts)),
            "2 events have a \"ts\" that is not a number (null, string, …): no timestamp");
  json j = input_health_json(h);
  EXPECT_EQ(j.at("status"), "partial");
  EXPECT_EQ(j.at("problems").size(), h.problems.size());
  // Reading that stops after events: severity partial, count = events delivered, offset = the byte.
  input_health t = read_health(R"([{"ph":"X","cat":"kernel","name":"a","ts":1,"dur":2}, {"ph")");
  ASSERT_EQ(t.problems.size(), 1u);
  EXPECT_EQ(t.problems[0].kind, read_problem_kind::read_stopped);
  EXPECT_EQ(t.problems[0].count, 1u);
  EXPECT_TRUE(t.problems[0].first_offset.has_value());
  // A scoped row (a rank of the gap analysis) prints its scope first.
  read_problem scoped = t.problems[0];
  scoped.scope = "Rank 1 (r1.json)";
  EXPECT_EQ(problem_text(scoped).rfind("Rank 1 (r1.json): reading stopped early", 0), 0u) << problem_text(scoped);
}

TEST(InputHealth, TruncatedDocumentIsPartialWhenEventsCameBeforeIt) {
  std::string doc = R"([{"ph":"X","cat":"kernel","name":"a","ts":1,"dur":2}, {"ph":"X","cat":"kernel","name":"b","ts":5,"dur":2}])";
  input_health h = read_health(std::string_view(doc).substr(0, doc.size() - 3));
  EXPECT_EQ(h.status, input_status::partial);
  EXPECT_NE(problem_text(h.problems.at(0)).find("reading stopped early"), std::string::npos);
}

TEST(InputHealth, ModelCountsKernelsWithoutDurAndRequiresGpuEvents) {
  fs::path d = temp_dir("model");
  write(d / "nodur.json", R"({"traceEvents": [{"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":1,"dur":3},
                                             {"ph":"X","cat":"kernel","name":"b","pid":0,"tid":7,"ts":5}]})");
  auto m = load_trace_model(d / "nodur.json");
  ASSERT_TRUE(m.ok());
  input_health h = check_model(*m, true);
  EXPECT_EQ(h.status, input_status::partial);
  EXPECT_NE(problem_text(h.problems.at(0)).find("1 of 2 GPU events without a usable \"dur\""), std::string::npos)
      << problem_text(h.problems[0]);
  EXPECT_EQ(h.problems.at(0).kind, read_problem_kind::gpu_missing_dur);
  EXPECT_EQ(h.problems[0].of, 2u);
  EXPECT_EQ(h.problems[0].first_offset, 1u);
  write(d / "cpu.json", R"({"traceEvents": [{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":1,"dur":3}]})");
  auto c = load_trace_model(d / "cpu.json");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(check_model(*c, true).status, input_status::unusable);
  EXPECT_EQ(check_model(*c, false).status, input_status::ok);
  auto dir = load_trace_model(d);  // a directory is not a trace: an error, never file_bytes = 2^64 - 1
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.get_status().message().find("is a directory"), std::string::npos);
  fs::remove_all(d);
}

TEST(CsvEncoding, InvalidUtf8BecomesReplacementCharacters) {
  EXPECT_EQ(utf8_sanitize("plain"), "plain");
  EXPECT_EQ(utf8_sanitize("caf\xC3\xA9"), "caf\xC3\xA9");                 // valid 2-byte
  EXPECT_EQ(utf8_sanitize("a\xFF" "b"), "a\xEF\xBF\xBD" "b");             // invalid byte
  EXPECT_EQ(utf8_sanitize("\xE2\x82"), "\xEF\xBF\xBD");                    // truncated 3-byte: one U+FFFD
  EXPECT_EQ(utf8_sanitize("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate: 3 (as Python)
  EXPECT_EQ(utf8_sanitize("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");        // emoji
  EXPECT_EQ(csv_escape("k\xC0,x"), "\"k\xEF\xBF\xBD,x\"");
}

TEST(RankDiscovery, JsonAndGzipRankFilesAreBothFound) {
  fs::path d = temp_dir("mixed");
  write(d / "w-rank-0.pt.trace.json", k_one_kernel);
  write(d / "w-rank-3.pt.trace.json.gz", k_one_kernel);  // plain bytes: the reader detects gzip by content
  discovery r = discover_rank_traces(d);
  ASSERT_EQ(r.files.size(), 2u);
  EXPECT_EQ(r.files[0].rank, 0);
  EXPECT_EQ(r.files[1].rank, 3);
  EXPECT_EQ(r.rule, "rank_gz+json");
  EXPECT_NE(r.summary().find("rank 0 w-rank-0.pt.trace.json, rank 3 w-rank-3.pt.trace.json.gz"), std::string::npos)
      << r.summary();
  fs::remove_all(d);
}

TEST(RankDiscovery, DuplicateRanksAreRefusedUnlessOneIsChosen) {
  fs::path d = temp_dir("dup");
  write(d / "a-rank-0.pt.trace.json", k_one_kernel);
  write(d / "b-rank-0.pt.trace.json", k_one_kernel);
  write(d / "a-rank-1.pt.trace.json", k_one_kernel);
  discovery r = discover_rank_traces(d);
  ASSERT_EQ(r.duplicates.size(), 1u);
  EXPECT_EQ(r.duplicates[0], "rank 0: a-rank-0.pt.trace.json, b-rank-0.pt.trace.json");
  gap_result g = analyze_gap(gap_config{}, d);
  ASSERT_FALSE(g.errors.empty());
  EXPECT_NE(g.errors[0].find("--rank-file"), std::string::npos);
  EXPECT_TRUE(g.merged.empty());
  discovery chosen = discover_rank_traces(d, {"b-rank-0.pt.trace.json"});
  EXPECT_TRUE(chosen.duplicates.empty());
  ASSERT_EQ(chosen.files.size(), 2u);
  EXPECT_EQ(chosen.files[0].path.filename(), "b-rank-0.pt.trace.json");
  fs::remove_all(d);
}

TEST(RankDiscovery, RanksFromDifferentRunsAreWarnedAbout) {
  fs::path d = temp_dir("runs");
  write(d / "x-rank-0.pt.trace.json",
        R"({"deviceProperties": [{"name": "NVIDIA H200"}], "traceEvents": [{"ph":"X","cat":"kernel","name":"k","ts":10,"dur":5}]})");
  write(d / "x-rank-1.pt.trace.json",
        R"({"deviceProperties": [{"name": "NVIDIA A100"}], "traceEvents": [{"ph":"X","cat":"kernel","name":"k","ts":9000,"dur":5}]})");
  gap_result g = analyze_gap(gap_config{}, d);
  std::string all;
  for (const auto& w : g.warnings) all += w + "\n";
  EXPECT_NE(all.find("device 'NVIDIA A100' differs from rank 0's 'NVIDIA H200'"), std::string::npos) << all;
  EXPECT_NE(all.find("do not overlap rank 0's"), std::string::npos) << all;
  fs::remove_all(d);
}

}  // namespace
}  // namespace magpie::trace
