// Attribution of GPU holders seen in an NVML snapshot (kernel/gpu_holders.h, issue 35 part 6):
// fake process tables and fake NVML lists.
#include "kernel/gpu_holders.h"

#include <gtest/gtest.h>

#include <map>

using namespace magpie;
using namespace magpie::kernel;

namespace {

// magpie is 100. Harness A (root 200, a session leader): 201 its harness (a child of the sandbox
// helper), 202 a helper in its tree. Harness B (root 300): 301. 400: a double-forked helper of A,
// re-parented to magpie, still in A's session; 401: one that also left the session (setsid).
// 500: a process of somebody else (parent 1).
std::map<pid_t, proc_row> holders_table() {
  return {{100, {1, 50}},    {200, {100, 200}}, {201, {200, 200}}, {202, {201, 200}}, {300, {100, 300}},
          {301, {300, 300}}, {400, {100, 200}}, {401, {100, 401}}, {500, {1, 500}}};
}

proc_lookup lookup_in(const std::map<pid_t, proc_row>& t) {
  return [t](pid_t p) -> std::optional<proc_row> {
    auto it = t.find(p);
    if (it == t.end()) return std::nullopt;
    return it->second;
  };
}

std::vector<gpu::gpu_process> fake_nvml(const std::vector<pid_t>& pids) {
  std::vector<gpu::gpu_process> v;
  for (pid_t p : pids) v.push_back({0, p, 1 << 20, "p" + std::to_string(p)});
  return v;
}

const gpu_holder& holder_of(const std::vector<gpu_holder>& v, pid_t pid) {
  for (const auto& h : v)
    if (h.process.pid == pid) return h;
  static gpu_holder none;
  return none;
}

}  // namespace

TEST(gpu_holders, attributes_each_holder_to_a_tree_magpie_or_nobody) {
  const auto t = holders_table();
  // A is being sampled (stopped: 200, 201, 202); B lives too.
  auto v = attribute_gpu_holders(fake_nvml({100, 201, 202, 301, 400, 401, 500, 201}), 100, 200, {200, 201, 202}, {200, 300},
                                 lookup_in(t));
  ASSERT_EQ(v.size(), 7u);  // 201 listed twice (two GPUs): once
  EXPECT_EQ(holder_of(v, 100).kind, holder_kind::supervisor);
  EXPECT_EQ(holder_of(v, 201).kind, holder_kind::sampled_tree);
  EXPECT_EQ(holder_of(v, 202).kind, holder_kind::sampled_tree);
  EXPECT_EQ(holder_of(v, 301).kind, holder_kind::other_harness);
  EXPECT_EQ(holder_of(v, 301).harness, 300);
  EXPECT_EQ(holder_of(v, 400).kind, holder_kind::escaped);
  EXPECT_EQ(holder_of(v, 400).harness, 200);  // its session: A's
  EXPECT_EQ(holder_of(v, 401).kind, holder_kind::escaped);
  EXPECT_EQ(holder_of(v, 401).harness, 200);  // no harness's session: the one whose timing runs
  EXPECT_EQ(holder_of(v, 500).kind, holder_kind::foreign);
}

TEST(gpu_holders, an_escaped_helper_counts_against_its_sessions_harness_while_another_is_sampled) {
  const auto t = holders_table();
  // B is being sampled: A's double-forked helper 400 is still A's (its session), 401 is B's now.
  auto v = attribute_gpu_holders(fake_nvml({301, 400, 401}), 100, 300, {300, 301}, {200, 300}, lookup_in(t));
  EXPECT_EQ(holder_of(v, 301).kind, holder_kind::sampled_tree);
  EXPECT_EQ(holder_of(v, 400).kind, holder_kind::escaped);
  EXPECT_EQ(holder_of(v, 400).harness, 200);
  EXPECT_EQ(holder_of(v, 401).harness, 300);
  // A process of the sampled tree that stop_tree's walk missed is still found by its parent chain.
  auto w = attribute_gpu_holders(fake_nvml({202}), 100, 200, {200}, {200, 300}, lookup_in(t));
  EXPECT_EQ(holder_of(w, 202).kind, holder_kind::sampled_tree);
  // Once A has finished (not live), its helper is nobody's harness's: blamed on the sampled one.
  auto x = attribute_gpu_holders(fake_nvml({400}), 100, 300, {300, 301}, {300}, lookup_in(t));
  EXPECT_EQ(holder_of(x, 400).kind, holder_kind::escaped);
  EXPECT_EQ(holder_of(x, 400).harness, 300);
}

TEST(gpu_holders, live_roots_registry) {
  register_harness_root(4242);
  auto r = live_harness_roots();
  EXPECT_NE(std::find(r.begin(), r.end(), 4242), r.end());
  unregister_harness_root(4242);
  r = live_harness_roots();
  EXPECT_EQ(std::find(r.begin(), r.end(), 4242), r.end());
}
