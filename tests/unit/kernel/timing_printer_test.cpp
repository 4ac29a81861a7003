// A compare report's timing_order (kernel/timing_printer.h): the keys, in the order the measuring
// loops used to write them (one group; groups per GPU, with the rounds only for a single group).
#include "kernel/timing_printer.h"

#include <gtest/gtest.h>

using namespace magpie;
using namespace magpie::kernel;

namespace {

std::vector<std::string> keys(const json& j) {
  std::vector<std::string> k;
  for (auto it = j.begin(); it != j.end(); ++it) k.push_back(it.key());
  return k;
}

timing_order one_group() {
  timing_order o;
  o.policy = "seeded shuffle";
  o.processes_per_kernel = 2;
  o.seed = 18446744073709551615ull;
  o.checked_rounds = {1, 7};
  o.first_rounds = {{"a#0", "b#1"}, {"b#1", "a#0"}};
  return o;
}

}  // namespace

TEST(timing_order_json, one_group) {
  EXPECT_EQ(dump_compact(timing_order_json(one_group())),
            R"({"policy":"seeded shuffle","processes_per_kernel":2,"seed":18446744073709551615,"checked_rounds":[1,7],)"
            R"("first_rounds":[["a#0","b#1"],["b#1","a#0"]]})");
}

TEST(timing_order_json, groups_per_gpu) {
  timing_order o;
  o.policy = "per GPU";
  o.processes_per_kernel = 2;
  o.seed = 3;
  o.by_device = true;
  device_order d;
  d.device = "0";
  d.processes = {0};
  d.order = one_group();
  device_order::kernel_row ok, failed;
  ok.kernel_id = "a";
  ok.ok = true;
  ok.samples = 10;
  ok.median_ns = 2.5;
  ok.speedup_vs_baseline = 1.0;
  ok.stop_reason = "time_budget";
  failed.kernel_id = "b";
  d.kernels = {ok, failed};
  o.devices = {d};
  o.rounds = false;
  json j = timing_order_json(o);
  EXPECT_EQ(keys(j), (std::vector<std::string>{"policy", "processes_per_kernel", "seed", "devices"}));
  EXPECT_EQ(keys(j["devices"][0]), (std::vector<std::string>{"device", "processes", "order", "kernels"}));
  EXPECT_EQ(dump_compact(j["devices"][0]["kernels"]),
            R"([{"kernel_id":"a","ok":true,"samples":10,"median_ns":2.5,"stop_reason":"time_budget","speedup_vs_baseline":1.0},)"
            R"({"kernel_id":"b","ok":false,"samples":0,"median_ns":null,"stop_reason":"","speedup_vs_baseline":null}])");
  EXPECT_EQ(j["devices"][0]["order"], timing_order_json(one_group()));
  o.rounds = true;  // one group bound to one GPU: its rounds follow the devices
  o.first_rounds = {{"a#0"}};
  o.checked_rounds = {2};
  EXPECT_EQ(keys(timing_order_json(o)),
            (std::vector<std::string>{"policy", "processes_per_kernel", "seed", "devices", "first_rounds", "checked_rounds"}));
}
