#include "gpu/specs.h"
#include "gpu/gpu_printer.h"

#include <gtest/gtest.h>

namespace magpie::gpu {
namespace {

const fs::path k_table = fs::path(MAGPIE_TEST_SOURCE_DIR) / "data/gpu_specs.json";

TEST(GpuSpecs, ShippedTableHasTheSevenGpusAndMatchesDeviceNames) {
  auto t = load_spec_table(k_table);
  ASSERT_TRUE(t.ok()) << t.get_status().message();
  std::vector<std::string> names;
  for (const auto& e : *t) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"H100 SXM", "H200", "A100 SXM", "B200", "MI300X", "MI325X", "MI355X"}));
  auto name_of = [&](const char* dev) {
    const spec_entry* e = match_spec(*t, dev);
    return e ? e->name : std::string("none");
  };
  EXPECT_EQ(name_of("NVIDIA H200"), "H200");
  EXPECT_EQ(name_of("NVIDIA H100 80GB HBM3"), "H100 SXM");
  EXPECT_EQ(name_of("NVIDIA H100 PCIe"), "none");  // no PCIe entry: better no roofline than a wrong one
  EXPECT_EQ(name_of("NVIDIA A100-SXM4-80GB"), "A100 SXM");
  EXPECT_EQ(name_of("AMD Instinct MI325X"), "MI325X");
  EXPECT_EQ(name_of("AMD Instinct MI300X"), "MI300X");
  EXPECT_EQ(name_of("gfx950"), "MI355X");
  EXPECT_EQ(name_of(""), "none");
  EXPECT_EQ(name_of("Tesla T4"), "none");
}

TEST(GpuSpecs, AchievableOverridesDatasheetPerKey) {
  auto t = load_spec_table(k_table);
  ASSERT_TRUE(t.ok());
  const spec_entry* h200 = match_spec(*t, "NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  gpu_spec a = resolve_spec(*h200, true);
  EXPECT_DOUBLE_EQ(a.mem_bw_gbps, 4300);
  EXPECT_DOUBLE_EQ(*a.peak_tflops("matrix_bf16"), 790);
  EXPECT_DOUBLE_EQ(*a.peak_tflops("matrix_fp8"), 1978.9);  // not measured: datasheet
  EXPECT_EQ(a.key_source["matrix_bf16"], "achievable");
  EXPECT_EQ(a.key_source["matrix_fp8"], "datasheet");
  gpu_spec d = resolve_spec(*h200, false);
  EXPECT_DOUBLE_EQ(d.mem_bw_gbps, 4800);
  EXPECT_DOUBLE_EQ(*d.peak_tflops("matrix_bf16"), 989.4);
  EXPECT_FALSE(d.peak_tflops("matrix_fp4").has_value());
  json j = gpu_spec_json(a);
  EXPECT_EQ(j["max_achievable_tflops"]["matrix_bf16"], 790);
}

TEST(GpuSpecs, TraceLensArchJson) {
  fs::path f = fs::temp_directory_path() / "magpie_arch_test.json";
  ASSERT_TRUE(write_file_atomic(f, R"({"name": "MI300X", "mem_bw_gbps": 5300,
    "max_achievable_tflops": {"matrix_bf16": 708, "vector_fp32": 81}})").ok());
  auto s = load_arch_json(f);
  ASSERT_TRUE(s.ok()) << s.get_status().message();
  EXPECT_EQ(s->name, "MI300X");
  EXPECT_DOUBLE_EQ(*s->peak_tflops("matrix_bf16"), 708);
  ASSERT_TRUE(write_file_atomic(f, R"({"name": "x", "max_achievable_tflops": {"matrix_bf16": "fast"}})").ok());
  auto bad = load_arch_json(f);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.get_status().message().find("matrix_bf16"), std::string::npos);
  fs::remove(f);
}

}  // namespace
}  // namespace magpie::gpu
