// Integrity checks' typed data (kernel/integrity.h) and its printer (kernel/integrity_printer.h):
// the JSON is the one the checks used to build directly (same keys, order and number forms).
#include "kernel/integrity.h"

#include <gtest/gtest.h>

#include "core/json.h"
#include "kernel/integrity_printer.h"

using namespace magpie;
using namespace magpie::kernel;

TEST(integrity_data, prints_what_the_json_it_replaces_printed) {
  const size_t pairs = 12;
  const int process = -1;
  const double zero = 0, share = 0.25;
  const bool host = true;
  check_data d = {{"pairs", pairs},
                  {"process", process},
                  {"zero", zero},
                  {"source", host ? "cpu" : "bracket"},
                  {"share", host ? check_value(share) : check_value(nullptr)},
                  {"none", host ? check_value(nullptr) : check_value(share)},
                  {"flag", pairs > 3},
                  {"median_ns", std::vector<double>{1.5, 2}},
                  {"reference", check_data{{"id", std::string("ref")}, {"trials", 3u}}}};
  json old = {{"pairs", pairs},
              {"process", process},
              {"zero", zero},
              {"source", host ? "cpu" : "bracket"},
              {"share", host ? json(share) : json(nullptr)},
              {"none", host ? json(nullptr) : json(share)},
              {"flag", pairs > 3},
              {"median_ns", json::array({1.5, 2.0})},
              {"reference", {{"id", "ref"}, {"trials", 3u}}}};
  EXPECT_EQ(dump_compact(check_value_json(d)), dump_compact(old));
  EXPECT_EQ(d.number("pairs", -1), 12);
  EXPECT_EQ(d.number("share", -1), 0.25);
  EXPECT_EQ(d.number("source", -1), -1);
  EXPECT_EQ(d.number("absent", -1), -1);
}

TEST(integrity_data, set_replaces_in_place_and_rows_print_as_a_list) {
  check_data info = {{"input_bytes", 4096.0}, {"floor_ns", 10.0}};
  info.set("median_ns", 12.5);
  info.set("input_bytes", 8192.0);
  EXPECT_EQ(dump_compact(check_value_json(info)), R"({"input_bytes":8192.0,"floor_ns":10.0,"median_ns":12.5})");
  std::vector<check_data> rows;
  rows.push_back({{"process", 0}, {"over_bracket", size_t{2}}});
  rows.push_back({{"process", 1}, {"over_bracket", size_t{0}}});
  EXPECT_EQ(dump_compact(check_value_json(rows)), R"([{"process":0,"over_bracket":2},{"process":1,"over_bracket":0}])");
}

TEST(integrity_report, prints_data_only_when_there_is_some_and_the_first_failure_as_reason) {
  integrity_report r;
  r.set("timer", check_status::pass, "host clock");
  r.set("clock_bracket", check_status::pass, "agree", std::vector<check_data>{});
  r.set("timed_outputs", check_status::pass, "ok", {{"checked", 3}});
  r.set("physical_floor", check_status::fail, "too fast", check_data{{"floor_ns", 5.0}});
  r.set("timed_outputs", check_status::fail, "wrong", {{"checked", 4}});  // replaced where it was
  EXPECT_EQ(dump_compact(integrity_report_json(r)),
            R"({"rejected":true,"reason":"wrong","checks":[{"name":"timer","status":"pass","detail":"host clock"},)"
            R"({"name":"clock_bracket","status":"pass","detail":"agree"},)"
            R"({"name":"timed_outputs","status":"fail","detail":"wrong","data":{"checked":4}},)"
            R"({"name":"physical_floor","status":"fail","detail":"too fast","data":{"floor_ns":5.0}}]})");
  EXPECT_EQ(r.find("physical_floor")->data.number("floor_ns", 0), 5.0);
  EXPECT_EQ(r.summary(), "2 passed, 2 failed");
}
