// Run handle states: one spelling per state (the benchmark_status schema's enum comes from it).
#include <gtest/gtest.h>

#include "mcp/run_registry.h"
#include "mcp/run_view_printer.h"

using namespace magpie;
using namespace magpie::mcp;

TEST(run_state, spellings_round_trip_and_activity) {
  std::vector<std::string> names = run_state_names();
  EXPECT_EQ(names, (std::vector<std::string>{"queued", "running", "succeeded", "failed", "cancelled", "timed_out"}));
  for (const auto& n : names) {
    auto s = parse_run_state(n);
    ASSERT_TRUE(s.has_value()) << n;
    EXPECT_EQ(run_state_name(*s), n);
  }
  EXPECT_TRUE(is_active(run_state::queued));
  EXPECT_TRUE(is_active(run_state::running));
  EXPECT_FALSE(is_active(run_state::timed_out));
  EXPECT_FALSE(parse_run_state("RUNNING").has_value());
}

TEST(run_state, a_finished_run_reports_its_state_word) {
  run_registry runs;
  spawn_spec spec;
  spec.argv = {"/bin/true"};
  auto id = runs.start("test", spec, 10, {{"workspace", "/w"}}, [](const run_result&, std::string*) { return json::object(); });
  ASSERT_TRUE(id.ok()) << id.get_status().message();
  std::string state;
  for (int i = 0; i < 200; ++i) {
    state = json_string(run_view_json(*runs.status(*id, 0)), "state");
    if (state != "running") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(state, "succeeded");
  run_view v = *runs.status(*id, 0);
  EXPECT_EQ(v.state, run_state::succeeded);
  EXPECT_EQ(v.tool, "test");
  json printed = run_view_json(v);
  EXPECT_EQ(printed["info"], (json{{"workspace", "/w"}}));
  EXPECT_EQ(printed["result"], json::object());  // the finish function's result
  EXPECT_FALSE(printed.contains("error"));
  ASSERT_EQ(runs.list().size(), 1u);
  EXPECT_EQ(run_views_json(runs.list())[0]["run_id"], *id);
  EXPECT_FALSE(runs.cancel(*id));  // finished runs cannot be cancelled
}
