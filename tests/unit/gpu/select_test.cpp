// GPU selection on nvidia-smi fixtures of two H200s with GPU 0 busy (tests/fixtures/gpu/).
#include "gpu/select.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace magpie::gpu {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream f(std::filesystem::path(MAGPIE_TEST_SOURCE_DIR) / "tests/fixtures/gpu" / name);
  EXPECT_TRUE(f.good()) << name;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<gpu_usage> observed(const std::string& dir) {
  auto gpus = parse_nvidia_gpu_usage(fixture(dir + "/query_gpu.csv"));
  add_nvidia_compute_apps(fixture(dir + "/compute_apps.csv"), gpus);
  return gpus;
}

TEST(gpu_select_fixtures, busy_process_gpu_is_passed_over) {
  auto gpus = observed("h200x2_one_busy");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].processes, 1);
  EXPECT_EQ(gpus[1].processes, 0);
  EXPECT_DOUBLE_EQ(gpus[0].utilization_pct, 100);
  selection_request req;
  auto sel = choose_idle_gpus("NVIDIA", gpus, req);
  ASSERT_TRUE(sel.ok()) << sel.get_status().message();
  EXPECT_EQ(sel->indices, (std::vector<int>{1}));
  EXPECT_EQ(sel->env[0], (std::pair<std::string, std::string>{"CUDA_VISIBLE_DEVICES", "1"}));
  EXPECT_EQ(sel->busy, (std::vector<std::string>{"0 (1 process(es))"}));
  // Both GPUs asked for: only one is idle.
  req.count = 2;
  auto two = choose_idle_gpus("NVIDIA", gpus, req);
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.get_status().message().find("needed 2 idle GPU(s) but only found 1"), std::string::npos);
  EXPECT_NE(two.get_status().message().find("busy: 0 (1 process(es))"), std::string::npos);
  // Compare workers take what is idle.
  req.allow_fewer = true;
  auto fewer = choose_idle_gpus("NVIDIA", gpus, req);
  ASSERT_TRUE(fewer.ok());
  EXPECT_EQ(fewer->indices, (std::vector<int>{1}));
}

TEST(gpu_select_fixtures, busy_in_another_container_shows_by_utilization) {
  auto gpus = observed("h200x2_busy_in_container");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].processes, 0);  // its process is not listed
  selection_request req;
  req.count = 2;
  auto two = choose_idle_gpus("NVIDIA", gpus, req);
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.get_status().message().find("0 (100% utilized)"), std::string::npos) << two.get_status().message();
  req.count = 1;
  auto one = choose_idle_gpus("NVIDIA", gpus, req);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->indices, (std::vector<int>{1}));
  // Without the utilization rule GPU 0 (21 GiB used of 140) would count as idle.
  req.count = 2;
  req.max_utilization_pct = 101;
  auto lax = choose_idle_gpus("NVIDIA", gpus, req);
  ASSERT_TRUE(lax.ok());
  EXPECT_EQ(lax->indices, (std::vector<int>{1, 0}));
}

TEST(gpu_select_fixtures, utilization_column_is_optional) {
  auto gpus = parse_nvidia_gpu_usage("0, GPU-a, 10, 143771\n1, GPU-b, 10, 143771, [N/A]\n");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].utilization_pct, -1);
  EXPECT_EQ(gpus[1].utilization_pct, -1);
  auto sel = choose_idle_gpus("NVIDIA", gpus, selection_request{2});
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->indices, (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace magpie::gpu
