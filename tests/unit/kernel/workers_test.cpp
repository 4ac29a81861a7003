// Compare workers: the GPU pool, the plan, the parallel runner and the merge of per-GPU timing.
#include "kernel/workers.h"
#include "kernel/stage_printer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

namespace magpie::kernel {
namespace {

TEST(workers, visible_devices_lists) {
  auto a = parse_visible_devices("CUDA_VISIBLE_DEVICES", " 0, 1 ");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, (std::vector<std::string>{"0", "1"}));
  EXPECT_TRUE(parse_visible_devices("CUDA_VISIBLE_DEVICES", "")->empty());
  EXPECT_TRUE(parse_visible_devices("CUDA_VISIBLE_DEVICES", "-1")->empty());
  EXPECT_EQ(*parse_visible_devices("CUDA_VISIBLE_DEVICES", "2,-1,3"), (std::vector<std::string>{"2"}));
  EXPECT_EQ(*parse_visible_devices("CUDA_VISIBLE_DEVICES", "GPU-7d8527e0,GPU-2b4e91c7"),
            (std::vector<std::string>{"GPU-7d8527e0", "GPU-2b4e91c7"}));
  auto empty = parse_visible_devices("HIP_VISIBLE_DEVICES", "0,,1");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.get_status().message().find("HIP_VISIBLE_DEVICES='0,,1': empty device entry"), std::string::npos);
  EXPECT_FALSE(parse_visible_devices("CUDA_VISIBLE_DEVICES", "1,1").ok());
}

TEST(workers, pool_sources_in_order) {
  std::vector<int64_t> s = {3, 5};  // scheduler.gpu_devices
  auto p = discover_device_pool(s, {{"CUDA_VISIBLE_DEVICES", "0,1"}}, false);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->ids, (std::vector<std::string>{"3", "5"}));
  EXPECT_EQ(p->source, "scheduler.gpu_devices");
  EXPECT_EQ(p->bind(1), (env_list{{"CUDA_VISIBLE_DEVICES", "5"}}));
  auto amd = discover_device_pool(s, {}, true);
  EXPECT_EQ(amd->bind(0), (env_list{{"ROCR_VISIBLE_DEVICES", "3"}}));
  s.clear();
  auto e = discover_device_pool(s, {{"HIP_VISIBLE_DEVICES", "1,0"}, {"PATH", "/bin"}}, false);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->variable, "HIP_VISIBLE_DEVICES");
  EXPECT_EQ(e->ids, (std::vector<std::string>{"1", "0"}));
  EXPECT_EQ(e->bind(0), (env_list{{"HIP_VISIBLE_DEVICES", "1"}}));
  auto hidden = discover_device_pool(s, {{"CUDA_VISIBLE_DEVICES", ""}}, false);
  ASSERT_TRUE(hidden.ok());
  EXPECT_TRUE(hidden->ids.empty());
  EXPECT_FALSE(discover_device_pool(s, {{"CUDA_VISIBLE_DEVICES", ",0"}}, false).ok());
}

device_pool two_gpus() {
  device_pool p;
  p.ids = {"0", "1"};
  p.source = "test";
  return p;
}

TEST(workers, plan_caps_binds_and_respects_pinned_kernels) {
  worker_plan one = plan_workers(1, two_gpus(), {});
  EXPECT_EQ(one.workers, 1);
  EXPECT_FALSE(one.bound());
  EXPECT_TRUE(one.bind(0).empty());

  worker_plan two = plan_workers(4, two_gpus(), {});
  EXPECT_EQ(two.workers, 2);
  EXPECT_TRUE(two.bound());
  EXPECT_EQ(two.bind(1), (env_list{{"CUDA_VISIBLE_DEVICES", "1"}}));
  EXPECT_TRUE(two.bind(2).empty());
  EXPECT_NE(two.reason.find("4 worker(s) asked for, 2 GPU(s)"), std::string::npos);
  EXPECT_EQ(worker_plan_json(two)["devices"], json::array({"0", "1"}));

  device_pool idle_only = two_gpus();
  idle_only.ids = {"1"};
  idle_only.pci_order = true;
  worker_plan lone = plan_workers(2, idle_only, {});
  EXPECT_EQ(lone.workers, 1);
  EXPECT_TRUE(lone.bound());  // the one idle GPU, not whatever GPU 0 is
  EXPECT_EQ(lone.bind(0), (env_list{{"CUDA_VISIBLE_DEVICES", "1"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}}));

  kernel_spec pinned;
  pinned.id = "mine";
  pinned.env = {{"CUDA_VISIBLE_DEVICES", "3"}};
  worker_plan kept = plan_workers(2, two_gpus(), {kernel_spec{}, pinned});
  EXPECT_EQ(kept.workers, 1);
  EXPECT_FALSE(kept.bound());
  EXPECT_NE(kept.reason.find("kernel 'mine' sets CUDA_VISIBLE_DEVICES"), std::string::npos);

  worker_plan none = plan_workers(2, device_pool{}, {});
  EXPECT_FALSE(none.bound());
  EXPECT_NE(none.reason.find("no GPU to bind workers to"), std::string::npos);
}

TEST(workers, runner_uses_every_worker_and_reports_on_the_caller) {
  std::mutex mu;
  std::set<int> slots;
  std::vector<int> runs(6, 0);
  std::vector<size_t> done;
  const auto caller = std::this_thread::get_id();
  bool done_on_caller = true;
  auto t0 = std::chrono::steady_clock::now();
  run_on_workers(
      6, 2,
      [&](size_t i, int slot) {
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        std::lock_guard<std::mutex> lock(mu);
        slots.insert(slot);
        ++runs[i];
      },
      [&](size_t i) {
        done_on_caller = done_on_caller && std::this_thread::get_id() == caller;
        done.push_back(i);
      });
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(slots, (std::set<int>{0, 1}));
  EXPECT_EQ(runs, std::vector<int>(6, 1));
  EXPECT_EQ(done.size(), 6u);
  EXPECT_TRUE(done_on_caller);
  EXPECT_LT(s, 0.8);  // 6 × 150 ms of sleep on 2 workers: ~0.45 s, sequential would be 0.9 s

  std::vector<size_t> order;
  run_on_workers(3, 1, [&](size_t i, int slot) {
    EXPECT_EQ(slot, 0);
    order.push_back(i);
  });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2}));
}

timing_result part(std::vector<double> samples, int process, const std::string& stop, bool ok = true) {
  timing_result r;
  r.ok = ok;
  r.error = ok ? "" : "broke";
  r.source = kernel::timing_source::host_clock;
  r.stop_reason = stop;
  r.samples_ns = samples;
  r.harness_samples_ns = samples;
  r.wall_s = static_cast<double>(samples.size());
  r.stray_ops = 1;
  process_result p;
  p.index = process;
  p.samples_ns = samples;
  r.processes.push_back(p);
  r.warnings = {"w"};
  return r;
}

TEST(workers, merge_of_per_gpu_results) {
  timing_result a = part({1, 2, 3}, 1, "noise_target_met"), b = part({4, 5}, 0, "time_budget");
  timing_result m = merge_timing_results({&a, &b}, {"0", "1"});
  EXPECT_TRUE(m.ok);
  EXPECT_EQ(m.samples_ns.size(), 5u);
  EXPECT_EQ(m.stats.n, 5u);
  EXPECT_DOUBLE_EQ(m.stats.median, 3);
  EXPECT_EQ(m.harness_stats.n, 5u);
  ASSERT_EQ(m.processes.size(), 2u);
  EXPECT_EQ(m.processes[0].index, 0);  // sorted by process index
  EXPECT_EQ(m.stop_reason, "time_budget");
  EXPECT_EQ(m.stray_ops, 2u);
  EXPECT_DOUBLE_EQ(m.wall_s, 3);
  EXPECT_EQ(m.warnings, (std::vector<std::string>{"GPU 0: w", "GPU 1: w"}));
  timing_result c = part({}, 2, "error", false);
  timing_result f = merge_timing_results({&a, &c}, {"0", "1"});
  EXPECT_FALSE(f.ok);
  EXPECT_EQ(f.error, "GPU 1: broke");
  EXPECT_EQ(f.stop_reason, "error");
}

}  // namespace
}  // namespace magpie::kernel
