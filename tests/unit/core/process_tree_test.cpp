// The process-tree rule (core/process_tree.h): setsid descendants are found and ended on
// timeouts, kills and after their parent exited; INCOMPLETE markers of interrupted runs.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/json.h"
#include "core/proc_stat.h"
#include "core/process_tree.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "core/workspace.h"

namespace magpie {
namespace {

/// A live (non-zombie) process whose argv holds `word`.
pid_t find_process(const std::string& word) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const auto pid = parse_int(e.path().filename().string());
    if (!pid) continue;
    auto cmd = read_file(e.path() / "cmdline");
    const auto stat = proc_stat_of(static_cast<pid_t>(*pid));
    if (!cmd.ok() || !stat || stat->state == 'Z') continue;
    for (const auto& w : split(*cmd, '\0'))
      if (w == word) return stat->pid;
  }
  return 0;
}

pid_t wait_for_process(const std::string& word, double seconds) {
  for (int i = 0; i < static_cast<int>(seconds * 50); ++i) {
    if (pid_t p = find_process(word)) return p;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

bool gone_within(const std::string& word, double seconds) {
  for (int i = 0; i < static_cast<int>(seconds * 50); ++i) {
    if (find_process(word) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

class ProcessTree : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(become_subreaper().ok()); }
};

TEST_F(ProcessTree, TreeListsRootFirst) {
  auto t = process_tree(::getpid());
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t[0], ::getpid());
  EXPECT_TRUE(process_tree(-1).empty());
  EXPECT_TRUE(is_subreaper());
}

TEST_F(ProcessTree, TimeoutEndsASetsidGrandchild) {
  spawn_spec s;
  s.argv = {"/bin/sh", "-c", "setsid sleep 61.125 & sleep 60"};
  s.kill_grace_s = 0.5;
  auto r = run_command(s, 0.5);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_TRUE(gone_within("61.125", 3)) << "the setsid grandchild outlived the timeout";
}

TEST_F(ProcessTree, NormalExitEndsALeftoverSetsidGrandchild) {
  // The parent exits at once: the grandchild is re-parented to us and found by its tag.
  spawn_spec s;
  s.argv = {"/bin/sh", "-c", "setsid sleep 61.25 & exit 0"};
  auto r = run_command(s, 10);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->success());
  EXPECT_TRUE(gone_within("61.25", 3)) << "the setsid grandchild outlived its parent's run";
}

TEST_F(ProcessTree, KillGroupEndsTheTreeAndTagsChildren) {
  spawn_spec s;
  s.argv = {"/bin/sh", "-c", "setsid sh -c 'sleep 61.5' & echo $MAGPIE_PROCESS_TREE; sleep 60"};
  s.kill_grace_s = 0.5;
  auto c = child_process::spawn(s);
  ASSERT_TRUE(c.ok());
  ASSERT_NE(wait_for_process("61.5", 5), 0);
  auto members = tree_members((*c)->pid(), (*c)->tree_tag());
  EXPECT_GE(members.size(), 3u);  // sh, the setsid sh, sleep
  (*c)->poll_output(0.2);
  (*c)->kill_group();
  EXPECT_FALSE((*c)->running());
  EXPECT_TRUE(gone_within("61.5", 3));
  auto r = (*c)->wait(1);
  EXPECT_TRUE(contains(r.out, (*c)->tree_tag())) << r.out;
}

TEST_F(ProcessTree, OrphanFoundByTagAfterItsParentDied) {
  // The child exits, leaving a setsid grandchild; end_process_tree(-1, tag) ends it.
  spawn_spec s;
  s.argv = {"/bin/sh", "-c", "setsid sleep 61.75 & sleep 0.2"};
  auto c = child_process::spawn(s);
  ASSERT_TRUE(c.ok());
  ASSERT_NE(wait_for_process("61.75", 5), 0);
  std::string tag = (*c)->tree_tag();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // the parent has exited now
  pid_t orphan = find_process("61.75");
  ASSERT_NE(orphan, 0);
  auto members = tree_members(-1, tag);
  EXPECT_NE(std::find(members.begin(), members.end(), orphan), members.end());
  EXPECT_GE(end_process_tree(-1, tag, 0.5), 1u);
  EXPECT_TRUE(gone_within("61.75", 3));
  (void)(*c)->wait(1);
}

TEST_F(ProcessTree, KeptProcessesAreLeftAlone) {
  spawn_spec s;
  s.argv = {"/bin/sh", "-c", "setsid sleep 61.875 & sleep 0.1"};
  auto c = child_process::spawn(s);
  ASSERT_TRUE(c.ok());
  pid_t p = wait_for_process("61.875", 5);
  ASSERT_NE(p, 0);
  keep_on_exit(p);
  (void)(*c)->wait(5);
  EXPECT_EQ(find_process("61.875"), p) << "a kept process was ended";
  ::kill(p, SIGKILL);
  EXPECT_TRUE(gone_within("61.875", 3));
  reap_orphans();
}

TEST(Workspace, IncompleteMarker) {
  auto dir = make_temp_dir(fs::temp_directory_path(), "magpie_incomplete_");
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(incomplete_reason(*dir), "");
  ASSERT_TRUE(mark_incomplete(*dir, "interrupted by SIGINT", SIGINT).ok());
  EXPECT_EQ(incomplete_reason(*dir), "interrupted by SIGINT");
  auto j = read_json_file(*dir / k_incomplete_file);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(json_string(*j, "state"), "interrupted");
  EXPECT_EQ(json_int(*j, "signal", 0), SIGINT);
  fs::remove_all(*dir);
}

}  // namespace
}  // namespace magpie
