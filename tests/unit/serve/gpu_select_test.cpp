// Tests of src/gpu/select.{h,cpp} (kept with the serving tests, its only user).
#include "gpu/select.h"

#include <gtest/gtest.h>

namespace magpie::gpu {
namespace {

TEST(gpu_select, nvidia_idle_gpus_least_used_first) {
  auto gpus = parse_nvidia_gpu_usage(
      "0, GPU-aaa, 70000, 143771\n1, GPU-bbb, 500, 143771\n2, GPU-ccc, 400, 143771\n3, GPU-ddd, 1, 143771\n");
  ASSERT_EQ(gpus.size(), 4u);
  add_nvidia_compute_apps("GPU-ddd, 4242\n", gpus);
  EXPECT_EQ(gpus[3].processes, 1);
  selection_request req;
  req.count = 2;
  req.min_free_memory_gb = 80;
  auto sel = choose_idle_gpus("NVIDIA", gpus, req);
  ASSERT_TRUE(sel.ok()) << sel.get_status().message();
  EXPECT_EQ(sel->indices, (std::vector<int>{2, 1}));  // 0 lacks memory, 3 is busy
  ASSERT_EQ(sel->env.size(), 2u);
  EXPECT_EQ(sel->env[0], (std::pair<std::string, std::string>{"CUDA_VISIBLE_DEVICES", "2,1"}));
  EXPECT_EQ(sel->env[1].first, "CUDA_DEVICE_ORDER");
  req.count = 3;
  auto short_sel = choose_idle_gpus("NVIDIA", gpus, req);
  ASSERT_FALSE(short_sel.ok());
  EXPECT_NE(short_sel.get_status().message().find("needed 3 idle GPU(s) but only found 2"), std::string::npos);
  EXPECT_NE(short_sel.get_status().message().find("3 (1 process(es))"), std::string::npos);
  req.count = 1;
  req.candidates = {1, 7};
  auto cand = choose_idle_gpus("NVIDIA", gpus, req);
  ASSERT_TRUE(cand.ok());
  EXPECT_EQ(cand->indices, (std::vector<int>{1}));
}

TEST(gpu_select, rocm_meminfo_and_pid_gpus) {
  auto gpus = parse_rocm_meminfo_csv(
      "device,VRAM Total Memory (B),VRAM Total Used Memory (B)\n"
      "card0,206141652992,283525120\ncard1,206141652992,283525120\ncard2,206141652992,103079215104\n");
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_NEAR(gpus[0].free_gib(), 191.73, 0.01);
  add_rocm_pid_gpus(
      "===== GPUs Indexed by PID =====\nPID 78912 is using 0 DRM device(s)\nPID 1949829 is using 1 DRM device(s):\n0 \n"
      "===== End of ROCm SMI Log =====\n",
      gpus);
  EXPECT_EQ(gpus[0].processes, 1);
  EXPECT_EQ(gpus[1].processes, 0);
  selection_request req;
  req.count = 1;
  req.min_free_memory_gb = 150;
  auto sel = choose_idle_gpus("AMD", gpus, req);
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->indices, (std::vector<int>{1}));
  EXPECT_EQ(sel->env[0], (std::pair<std::string, std::string>{"ROCR_VISIBLE_DEVICES", "1"}));
  EXPECT_EQ(sel->env[1], (std::pair<std::string, std::string>{"HIP_VISIBLE_DEVICES", "0"}));
}

TEST(gpu_select, multi_device_pid_lines) {
  std::vector<gpu_usage> gpus = {{0, "card0", 0, 1000, 0}, {1, "card1", 0, 1000, 0}, {2, "card2", 0, 1000, 0}};
  add_rocm_pid_gpus("PID 28156 is using 2 DRM device(s):\n0 1 \nPID 28154 is using 1 DRM device(s):\n0 \n", gpus);
  EXPECT_EQ(gpus[0].processes, 2);
  EXPECT_EQ(gpus[1].processes, 1);
  EXPECT_EQ(gpus[2].processes, 0);
  EXPECT_TRUE(has_visible_devices({{"A", "1"}, {"HIP_VISIBLE_DEVICES", "0"}}));
  EXPECT_FALSE(has_visible_devices({{"A", "1"}}));
}

}  // namespace
}  // namespace magpie::gpu
