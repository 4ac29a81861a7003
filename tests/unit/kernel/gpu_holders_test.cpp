// Attribution of GPU holders seen in an NVML snapshot (kernel/gpu_holders.h, issue 35): fake
// process tables and fake NVML lists.
#include "kernel/gpu_holders.h"

#include <gtest/gtest.h>

#include <map>

using namespace magpie;
using namespace magpie::kernel;

namespace {

struct fake_proc {
  proc_row row;
  std::vector<std::string> chain;  ///< MAGPIE_PROCESS_TREE components in its environment
};

process_table table_of(const std::map<pid_t, fake_proc>& t) {
  process_table pt;
  pt.row = [t](pid_t p) -> std::optional<proc_row> {
    auto it = t.find(p);
    if (it == t.end()) return std::nullopt;
    return it->second.row;
  };
  pt.tree_chain = [t](pid_t p) {
    auto it = t.find(p);
    return it == t.end() ? std::vector<std::string>() : it->second.chain;
  };
  return pt;
}

// magpie is 100. Harness A (root 200, a session leader): 201 its harness (a child of the sandbox
// helper), 202 a helper in its tree. Harness B (root 300): 301. 400: a double-forked helper of A,
// re-parented to magpie, still in A's session; 401: one that also left the session (setsid).
// 500: a process of somebody else (parent 1). No start times, no tags (all 0 / empty).
std::map<pid_t, fake_proc> holders_table() {
  auto row = [](pid_t ppid, pid_t sid) { return fake_proc{{ppid, sid, sid, 0}, {}}; };
  return {{100, row(1, 50)},    {200, row(100, 200)}, {201, row(200, 200)}, {202, row(201, 200)}, {300, row(100, 300)},
          {301, row(300, 300)}, {400, row(100, 200)}, {401, row(100, 401)}, {500, row(1, 500)}};
}

std::vector<harness_root> roots(std::initializer_list<pid_t> pids) {
  std::vector<harness_root> v;
  for (pid_t p : pids) v.push_back({p, 0, "t" + std::to_string(p), false});
  return v;
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
  const auto t = table_of(holders_table());
  // A is being sampled (stopped: 200, 201, 202); B lives too.
  auto v = attribute_gpu_holders(fake_nvml({100, 201, 202, 301, 400, 401, 500, 201}), 100, 200, {200, 201, 202},
                                 roots({200, 300}), t);
  ASSERT_EQ(v.size(), 7u);  // 201 listed twice (two GPUs): once
  EXPECT_EQ(holder_of(v, 100).kind, holder_kind::supervisor);
  EXPECT_EQ(holder_of(v, 201).kind, holder_kind::sampled_tree);
  EXPECT_EQ(holder_of(v, 202).kind, holder_kind::sampled_tree);
  EXPECT_EQ(holder_of(v, 301).kind, holder_kind::other_harness);
  EXPECT_EQ(holder_of(v, 301).harness, 300);
  EXPECT_EQ(holder_of(v, 400).kind, holder_kind::escaped);
  EXPECT_EQ(holder_of(v, 400).harness, 200);  // its session: A's
  EXPECT_EQ(holder_of(v, 400).basis, blame_basis::session);
  EXPECT_EQ(holder_of(v, 401).kind, holder_kind::escaped);
  EXPECT_EQ(holder_of(v, 401).harness, 200);  // no session, no tag, no start time: the one whose timing runs
  EXPECT_EQ(holder_of(v, 401).basis, blame_basis::sampled);
  EXPECT_EQ(holder_of(v, 500).kind, holder_kind::foreign);
}

TEST(gpu_holders, an_escaped_helper_counts_against_its_sessions_harness_while_another_is_sampled) {
  const auto t = table_of(holders_table());
  // B is being sampled: A's double-forked helper 400 is still A's (its session), 401 is B's now.
  auto v = attribute_gpu_holders(fake_nvml({301, 400, 401}), 100, 300, {300, 301}, roots({200, 300}), t);
  EXPECT_EQ(holder_of(v, 301).kind, holder_kind::sampled_tree);
  EXPECT_EQ(holder_of(v, 400).kind, holder_kind::escaped);
  EXPECT_EQ(holder_of(v, 400).harness, 200);
  EXPECT_EQ(holder_of(v, 401).harness, 300);
  // A process of the sampled tree that stop_tree's walk missed is still found by its parent chain.
  auto w = attribute_gpu_holders(fake_nvml({202}), 100, 200, {200}, roots({200, 300}), t);
  EXPECT_EQ(holder_of(w, 202).kind, holder_kind::sampled_tree);
  // Once A has finished (not live), its helper is nobody's harness's: B, the only one left.
  auto x = attribute_gpu_holders(fake_nvml({400}), 100, 300, {300, 301}, roots({300}), t);
  EXPECT_EQ(holder_of(x, 400).kind, holder_kind::escaped);
  EXPECT_EQ(holder_of(x, 400).harness, 300);
}

namespace {

// The setsid case (no sandbox): magpie 100; honest harness H (root 200, started at tick 1000,
// tag "100.1", its harness process 201) and attacker C (root 300, tick 1001, tag "100.2", harness
// 301). C's helper 350 double-forked and called setsid: parent magpie, its own session and group,
// started at tick 1500. `chain`: what its environment says.
std::map<pid_t, fake_proc> setsid_table(const std::vector<std::string>& chain) {
  return {{200, {{100, 200, 200, 1000}, {"100.1"}}}, {201, {{200, 200, 200, 1000}, {"100.1"}}},
          {300, {{100, 300, 300, 1001}, {"100.2"}}}, {301, {{300, 300, 300, 1001}, {"100.2"}}},
          {350, {{100, 350, 350, 1500}, chain}}};
}

const std::vector<harness_root> k_h_and_c = {{200, 1000, "100.1", false}, {300, 1001, "100.2", false}};

/// Snapshots with H sampled, then C, then H again, tallied; the registry after them.
void snapshots_h_c_h(harness_registry& reg, const process_table& t) {
  for (const auto& r : k_h_and_c) reg.add(r);
  reg.tally(attribute_gpu_holders(fake_nvml({201, 301, 350}), 100, 200, {200, 201}, reg.known(), t));
  reg.tally(attribute_gpu_holders(fake_nvml({201, 301, 350}), 100, 300, {300, 301}, reg.known(), t));
  reg.tally(attribute_gpu_holders(fake_nvml({201, 301, 350}), 100, 200, {200, 201}, reg.known(), t));
}

}  // namespace

TEST(gpu_holders, a_setsid_helper_that_kept_its_tag_is_charged_to_its_harness_too) {
  const auto t = table_of(setsid_table({"100.2"}));  // the helper kept its environment
  auto at_h = attribute_gpu_holders(fake_nvml({201, 301, 350}), 100, 200, {200, 201}, k_h_and_c, t);
  EXPECT_EQ(holder_of(at_h, 350).kind, holder_kind::escaped);
  EXPECT_EQ(holder_of(at_h, 350).harness, 300);  // sampled H, charged to C: its tag
  EXPECT_EQ(holder_of(at_h, 350).basis, blame_basis::tree_tag);
  EXPECT_EQ(holder_of(at_h, 350).also, 200);  // and to H: it started before the helper (a tag clears nobody)
  harness_registry reg;
  snapshots_h_c_h(reg, t);
  EXPECT_EQ(reg.tally_of(300).extra(), 1u);  // C: its helper, once however often seen
  EXPECT_EQ(reg.tally_of(300).describe(), "301 (p301), 350 (p350, outside the harness's tree; by its tree tag)");
  EXPECT_EQ(reg.tally_of(200).extra(), 1u);  // H spoiled too: the documented gap without the sandbox
  // H started after the helper (a later process of the honest implementation): spared.
  auto late = setsid_table({"100.2"});
  late[200].row.start_time = late[201].row.start_time = 1800;
  auto late_h = k_h_and_c;
  late_h[0].start_time = 1800;
  harness_registry reg2;
  for (const auto& r : late_h) reg2.add(r);
  reg2.tally(attribute_gpu_holders(fake_nvml({201, 301, 350}), 100, 200, {200, 201}, reg2.known(), table_of(late)));
  EXPECT_EQ(reg2.tally_of(200).extra(), 0u);
  EXPECT_EQ(reg2.tally_of(300).extra(), 1u);
}

TEST(gpu_holders, a_copied_tag_never_frees_the_attacker) {
  // C's helper copied H's tag ("100.1", readable in H's /proc/<pid>/environ without the sandbox).
  // At C's snapshots the claim charges H, and C as well: C started before the helper.
  harness_registry reg;
  snapshots_h_c_h(reg, table_of(setsid_table({"100.1"})));
  EXPECT_EQ(reg.tally_of(300).extra(), 1u);
  EXPECT_EQ(reg.tally_of(300).escaped.at(0).basis, blame_basis::sampled);
  EXPECT_EQ(reg.tally_of(200).extra(), 1u);
}

TEST(gpu_holders, a_scrubbed_tag_leaves_the_blame_on_whoever_is_sampled_never_on_nobody) {
  // The helper exec'd with an empty environment: nothing tells H from C (both started before
  // it). It is counted against each at its own snapshots: the honest one is spoiled too (the
  // documented gap), the attacker never goes free.
  harness_registry reg;
  snapshots_h_c_h(reg, table_of(setsid_table({})));
  EXPECT_EQ(reg.tally_of(200).extra(), 1u);
  EXPECT_EQ(reg.tally_of(300).extra(), 1u);
  EXPECT_EQ(reg.tally_of(300).escaped.at(0).basis, blame_basis::sampled);
}

TEST(gpu_holders, a_tag_moves_the_blame_only_to_a_tree_that_could_have_spawned_it) {
  // A tag naming H while its session is C's: the kernel-set session wins.
  auto t = setsid_table({"100.1"});
  t[350].row.sid = 300;
  auto v = attribute_gpu_holders(fake_nvml({350}), 100, 200, {200, 201}, k_h_and_c, table_of(t));
  EXPECT_EQ(holder_of(v, 350).harness, 300);
  EXPECT_EQ(holder_of(v, 350).basis, blame_basis::session);
  // Same with the process group (setpgid into C's group needs C's session: also kernel-set).
  t[350].row.sid = 350;
  t[350].row.pgrp = 300;
  v = attribute_gpu_holders(fake_nvml({350}), 100, 200, {200, 201}, k_h_and_c, table_of(t));
  EXPECT_EQ(holder_of(v, 350).harness, 300);
  // A tag naming a harness that started after the helper is a lie: ignored. H2 (root 600, tag
  // "100.3") started at tick 2000, after 350; C is sampled: the claim does not move it to H2.
  t = setsid_table({"100.3"});
  t[600] = {{100, 600, 600, 2000}, {"100.3"}};
  auto three = k_h_and_c;
  three.push_back({600, 2000, "100.3", false});
  v = attribute_gpu_holders(fake_nvml({350}), 100, 300, {300, 301}, three, table_of(t));
  EXPECT_EQ(holder_of(v, 350).harness, 300);
  EXPECT_EQ(holder_of(v, 350).basis, blame_basis::sampled);
  // A copied tag (read from H's /proc/<pid>/environ) charges H, and C too (sampled, started before it).
  v = attribute_gpu_holders(fake_nvml({350}), 100, 300, {300, 301}, k_h_and_c, table_of(setsid_table({"100.1"})));
  EXPECT_EQ(holder_of(v, 350).harness, 200);
  EXPECT_EQ(holder_of(v, 350).basis, blame_basis::tree_tag);
  EXPECT_EQ(holder_of(v, 350).also, 300);
}

TEST(gpu_holders, start_times_rule_out_harnesses_started_after_the_helper) {
  // No tag. H2 (root 600) started at tick 2000, after the helper (1500): it cannot have spawned it.
  auto t = setsid_table({});
  t[600] = {{100, 600, 600, 2000}, {"100.3"}};
  // H and C started before it: while H2 is sampled the helper is not H2's, and with two
  // candidates left it is counted against nobody at this snapshot (H's and C's own count it).
  auto three = k_h_and_c;
  three.push_back({600, 2000, "100.3", false});
  auto v = attribute_gpu_holders(fake_nvml({350}), 100, 600, {600}, three, table_of(t));
  EXPECT_EQ(holder_of(v, 350).kind, holder_kind::escaped);
  EXPECT_EQ(holder_of(v, 350).harness, 0);
  EXPECT_EQ(holder_of(v, 350).basis, blame_basis::none);
  // H started after it instead (a later process of the honest implementation; C the only
  // harness, live or finished, that started before the helper): C, even while H is sampled.
  t[200].row.start_time = t[201].row.start_time = 1800;
  auto late_h = k_h_and_c;
  late_h[0].start_time = 1800;
  v = attribute_gpu_holders(fake_nvml({350}), 100, 200, {200, 201}, late_h, table_of(t));
  EXPECT_EQ(holder_of(v, 350).harness, 300);
  EXPECT_EQ(holder_of(v, 350).basis, blame_basis::start_time);
  // A finished harness that also started before it makes C not the only one: H is sampled and
  // started after it, so nobody now (C's own snapshots count it).
  late_h.push_back({700, 900, "100.0", true});
  v = attribute_gpu_holders(fake_nvml({350}), 100, 200, {200, 201}, late_h, table_of(t));
  EXPECT_EQ(holder_of(v, 350).harness, 0);
  v = attribute_gpu_holders(fake_nvml({350}), 100, 300, {300, 301}, late_h, table_of(t));
  EXPECT_EQ(holder_of(v, 350).harness, 300);
  // Started before every live harness (a finished one's helper): the sampled one's, its timing runs.
  t[350].row.start_time = 950;
  v = attribute_gpu_holders(fake_nvml({350}), 100, 200, {200, 201}, late_h, table_of(t));
  EXPECT_EQ(holder_of(v, 350).harness, 200);
  EXPECT_EQ(holder_of(v, 350).basis, blame_basis::sampled);
}

// Issue 35 part f, item 3: a GPU helper that holds the GPU only while its own tree is not
// sampled. Before this change only a harness's own snapshots counted, each on its own (at most
// one holder of the tree per snapshot), so both cases below passed.
TEST(gpu_holders, a_helper_that_holds_the_gpu_only_between_its_own_snapshots_is_counted) {
  // Tree A: root 200, harness 201, helper 202 (in the tree). B: root 300, harness 301.
  std::map<pid_t, fake_proc> t = {{200, {{100, 200, 200, 1000}, {}}}, {201, {{200, 200, 200, 1000}, {}}},
                                  {202, {{201, 200, 200, 1200}, {}}}, {300, {{100, 300, 300, 1001}, {}}},
                                  {301, {{300, 300, 300, 1001}, {}}}};
  const std::vector<harness_root> ab = {{200, 1000, "a", false}, {300, 1001, "b", false}};
  {
    // 202 releases its context before each of A's checked replies; B's snapshot (A running) sees it.
    harness_registry reg;
    for (const auto& r : ab) reg.add(r);
    reg.tally(attribute_gpu_holders(fake_nvml({201, 301}), 100, 200, {200, 201, 202}, reg.known(), table_of(t)));
    reg.tally(attribute_gpu_holders(fake_nvml({201, 202, 301}), 100, 300, {300, 301}, reg.known(), table_of(t)));
    reg.tally(attribute_gpu_holders(fake_nvml({201, 301}), 100, 200, {200, 201, 202}, reg.known(), table_of(t)));
    EXPECT_EQ(reg.tally_of(200).extra(), 1u);
    EXPECT_EQ(reg.tally_of(300).extra(), 0u);
  }
  {
    // The harness and its helper take turns: never two holders in one snapshot, two over the run.
    harness_registry reg;
    for (const auto& r : ab) reg.add(r);
    reg.tally(attribute_gpu_holders(fake_nvml({202, 301}), 100, 200, {200, 201, 202}, reg.known(), table_of(t)));
    reg.tally(attribute_gpu_holders(fake_nvml({201, 301}), 100, 200, {200, 201, 202}, reg.known(), table_of(t)));
    EXPECT_EQ(reg.tally_of(200).extra(), 1u);
    EXPECT_EQ(reg.tally_of(200).describe(), "202 (p202), 201 (p201)");
  }
  {
    // The same pid started again (a new process) is another holder; the same process seen again is not.
    harness_registry reg;
    for (const auto& r : ab) reg.add(r);
    reg.tally(attribute_gpu_holders(fake_nvml({201}), 100, 200, {200, 201}, reg.known(), table_of(t)));
    reg.tally(attribute_gpu_holders(fake_nvml({201}), 100, 200, {200, 201}, reg.known(), table_of(t)));
    EXPECT_EQ(reg.tally_of(200).extra(), 0u);
    t[201].row.start_time = 1300;
    reg.tally(attribute_gpu_holders(fake_nvml({201}), 100, 200, {200, 201}, reg.known(), table_of(t)));
    EXPECT_EQ(reg.tally_of(200).extra(), 1u);
  }
}

TEST(gpu_holders, registry_keeps_finished_harnesses_and_drops_their_tallies) {
  harness_registry reg;
  reg.add({4242, 10, "x", false});
  reg.add({4343, 11, "y", false});
  ASSERT_EQ(reg.known().size(), 2u);
  gpu_holder h;
  h.process = {0, 99, 1, "helper"};
  h.kind = holder_kind::escaped;
  h.harness = 4242;
  reg.tally({h});
  EXPECT_EQ(reg.tally_of(4242).extra(), 1u);
  reg.remove(4242);
  EXPECT_EQ(reg.tally_of(4242).extra(), 0u);
  reg.tally({h});  // a finished harness is charged with nothing more
  EXPECT_EQ(reg.tally_of(4242).extra(), 0u);
  const auto known = reg.known();
  ASSERT_EQ(known.size(), 2u);
  EXPECT_TRUE(known[0].finished);
  EXPECT_FALSE(known[1].finished);
  h.harness = 0;  // attributed to nobody at that snapshot
  reg.tally({h});
  EXPECT_EQ(reg.tally_of(4343).extra(), 0u);
}
