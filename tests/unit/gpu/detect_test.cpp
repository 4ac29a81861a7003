#include "gpu/detect.h"

#include <gtest/gtest.h>

using namespace magpie::gpu;

TEST(gpu_detect, rocminfo_first_gfx_token) {
  std::string out = "Agent 1\n  Name: AMD EPYC\nAgent 2\n  Name:                    gfx942\n  Marketing Name: MI300X\n";
  EXPECT_EQ(parse_rocminfo_arch(out), "gfx942");
  EXPECT_EQ(parse_rocminfo_arch("no gpu here"), "");
}

TEST(gpu_detect, compute_capability_to_arch) {
  EXPECT_EQ(compute_cap_to_arch("9.0"), "sm_90");
  EXPECT_EQ(compute_cap_to_arch(" 8.6\n"), "sm_86");
  EXPECT_EQ(compute_cap_to_arch("N/A"), "");
}

TEST(gpu_detect, nvidia_smi_csv) {
  std::string driver;
  auto d = parse_nvidia_smi_devices("0, NVIDIA H200, GPU-abc, 143771, 0, 9.0, 580.159.04\n", &driver);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].name, "NVIDIA H200");
  EXPECT_DOUBLE_EQ(d[0].memory_total_mib, 143771);
  EXPECT_EQ(driver, "580.159.04");
}
