#include "kernel/timing.h"

#include <gtest/gtest.h>

#include "kernel/cupti_records.h"
#include "kernel/profile.h"

using namespace magpie;
using namespace magpie::kernel;

TEST(stopping, needs_min_samples_and_min_time) {
  timing_policy p;
  p.min_samples = 10;
  p.min_time_s = 1e-3;  // 1 ms accumulated
  stopping_criterion c(p);
  std::string why;
  for (int i = 0; i < 9; ++i) c.add(1e6);  // 9 × 1 ms, zero noise
  EXPECT_FALSE(c.finished(&why));          // min_samples not reached
  c.add(1e6);
  EXPECT_TRUE(c.finished(&why));
  EXPECT_EQ(why, "noise_target_met");
}

TEST(stopping, noisy_samples_run_until_converged_or_budget) {
  timing_policy p;
  p.min_samples = 10;
  p.min_time_s = 0;
  p.max_noise = 0.005;
  stopping_criterion c(p);
  std::string why;
  bool done = false;
  for (int i = 0; i < 2000 && !done; ++i) {
    c.add(i % 2 ? 1.2e6 : 0.8e6);  // 20% noise that never drops below 0.5%
    done = c.finished(&why);
  }
  EXPECT_TRUE(done);
  EXPECT_EQ(why, "noise_converged");
  EXPECT_GT(c.noise(), 0.1);
}

TEST(stopping, max_samples) {
  timing_policy p;
  p.max_samples = 5;
  p.min_samples = 100;
  stopping_criterion c(p);
  std::string why;
  for (int i = 0; i < 5; ++i) c.add(1.0);
  EXPECT_TRUE(c.finished(&why));
  EXPECT_EQ(why, "max_samples");
}

TEST(ncu, parses_csv_with_units_and_separators) {
  std::string out =
      "==PROF== Connected to process 123\n"
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
      "\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
      "\"0\",\"123\",\"a.out\",\"h\",\"_Z3addPKfS0_Pfi\",\"1\",\"7\",\"(256, 1, 1)\",\"(4, 1, 1)\",\"0\",\"9.0\",\"\",\"gpu__time_duration.sum\",\"usecond\",\"12.50\"\n"
      "\"1\",\"123\",\"a.out\",\"h\",\"_Z3addPKfS0_Pfi\",\"1\",\"7\",\"(256, 1, 1)\",\"(4, 1, 1)\",\"0\",\"9.0\",\"\",\"gpu__time_duration.sum\",\"nsecond\",\"12,600\"\n"
      "==PROF== Disconnected\n";
  auto ks = parse_ncu_csv(out);
  ASSERT_EQ(ks.size(), 1u);
  ASSERT_EQ(ks[0].time_ns.size(), 2u);
  EXPECT_DOUBLE_EQ(ks[0].time_ns[0], 12500);
  EXPECT_DOUBLE_EQ(ks[0].time_ns[1], 12600);
}

TEST(rocprof, pmc_perf_kernel_summary) {
  auto j = parse_rocprof_pmc_perf(
      "Dispatch_ID,Kernel_Name,Start_Timestamp,End_Timestamp\n0,vector_add,100,300\n1,__amd_rocclr_copyBuffer,0,50\n2,vector_add,400,500\n");
  ASSERT_TRUE(j.ok());
  ASSERT_EQ(j->size(), 1u);
  EXPECT_EQ((*j)[0]["dispatch_count"], 2);
  EXPECT_DOUBLE_EQ((*j)[0]["duration_ns"]["total"].get<double>(), 300);
}
