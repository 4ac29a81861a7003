// Parsers and state logic on output recorded from Slurm 22.05 (tests/unit/sched/data/README.md).
#include "sched/slurm_parse.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "core/fs.h"
#include "sched/slurm_client.h"

using namespace magpie;
using namespace magpie::sched;

namespace {

std::string data(const std::string& name) {
  auto s = read_file(fs::path(MAGPIE_TEST_SOURCE_DIR) / "tests/unit/sched/data" / name);
  EXPECT_TRUE(s.ok()) << name;
  return s.ok() ? *s : "";
}

std::map<std::string, job_info> by_id(const std::vector<job_info>& v) {
  std::map<std::string, job_info> m;
  for (const auto& j : v) m[j.job_id] = j;
  return m;
}

}  // namespace

TEST(job_state, names_codes_and_decorations) {
  EXPECT_EQ(parse_job_state("CANCELLED by 0"), job_state::cancelled);
  EXPECT_EQ(parse_job_state("CANCELLED+"), job_state::cancelled);
  EXPECT_EQ(parse_job_state(" running "), job_state::running);
  EXPECT_EQ(parse_job_state("PD"), job_state::pending);
  EXPECT_EQ(parse_job_state("CG"), job_state::completing);
  EXPECT_EQ(parse_job_state("TO"), job_state::timeout);
  EXPECT_EQ(parse_job_state("OUT_OF_MEMORY"), job_state::out_of_memory);
  EXPECT_EQ(parse_job_state("OOM"), job_state::out_of_memory);
  EXPECT_EQ(parse_job_state("NODE_FAIL"), job_state::node_fail);
  EXPECT_EQ(parse_job_state("BOOT_FAIL"), job_state::boot_fail);
  EXPECT_EQ(parse_job_state("PREEMPTED"), job_state::preempted);
  EXPECT_EQ(parse_job_state("REQUEUE_HOLD"), job_state::pending);
  EXPECT_EQ(parse_job_state("what"), job_state::unknown);
  EXPECT_EQ(parse_job_state(""), job_state::unknown);
  for (auto s : {job_state::completed, job_state::failed, job_state::timeout, job_state::cancelled, job_state::node_fail,
                 job_state::out_of_memory, job_state::preempted, job_state::deadline})
    EXPECT_TRUE(is_terminal(s)) << job_state_name(s);
  for (auto s : {job_state::pending, job_state::running, job_state::completing, job_state::suspended,
                 job_state::requeued, job_state::unknown, job_state::not_submitted})
    EXPECT_FALSE(is_terminal(s)) << job_state_name(s);
  EXPECT_STREQ(job_state_name(job_state::out_of_memory), "OUT_OF_MEMORY");
  EXPECT_EQ(parse_job_state(job_state_name(job_state::special_exit)), job_state::special_exit);
}

TEST(slurm_parse, durations_and_time_limits) {
  EXPECT_DOUBLE_EQ(parse_slurm_duration("00:01:17"), 77);
  EXPECT_DOUBLE_EQ(parse_slurm_duration("1:17"), 77);  // squeue TIME
  EXPECT_DOUBLE_EQ(parse_slurm_duration("1-02:03:04"), 86400 + 3600 * 2 + 184);
  EXPECT_DOUBLE_EQ(parse_slurm_duration("2-12"), 2 * 86400 + 12 * 3600);
  EXPECT_DOUBLE_EQ(parse_slurm_duration("30"), 1800);  // sbatch --time minutes
  EXPECT_DOUBLE_EQ(parse_slurm_duration("00:00:01.500"), 1.5);
  EXPECT_TRUE(std::isinf(parse_slurm_duration("UNLIMITED")));
  EXPECT_EQ(parse_slurm_duration("Partition_Limit"), -1);
  EXPECT_EQ(parse_slurm_duration(""), -1);
  EXPECT_EQ(parse_slurm_duration("1:2:3:4"), -1);
  EXPECT_TRUE(valid_time_limit("00:30:00"));
  EXPECT_TRUE(valid_time_limit("1"));
  EXPECT_TRUE(valid_time_limit("1-00:00:00"));
  EXPECT_FALSE(valid_time_limit("soon"));
  EXPECT_FALSE(valid_time_limit("0"));
  EXPECT_FALSE(valid_time_limit(""));
}

TEST(slurm_parse, sbatch_parsable) {
  EXPECT_EQ(parse_sbatch_parsable("1234\n").value(), "1234");
  EXPECT_EQ(parse_sbatch_parsable("1234;cluster\n").value(), "1234");
  EXPECT_FALSE(parse_sbatch_parsable("sbatch: error: Batch job submission failed\n").ok());
  EXPECT_FALSE(parse_sbatch_parsable("").ok());
}

TEST(slurm_parse, sacct_recorded_states) {
  auto m = by_id(parse_sacct(data("sacct_states.txt")));
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m["3"].state, job_state::timeout);
  EXPECT_DOUBLE_EQ(m["3"].elapsed_s, 77);
  EXPECT_EQ(m["3"].time_limit, "00:01:00");
  EXPECT_EQ(m["4"].state, job_state::cancelled);
  EXPECT_EQ(m["4"].state_text, "CANCELLED by 0");
  EXPECT_EQ(m["5"].state, job_state::failed);
  EXPECT_EQ(m["5"].exit_status, 3);
  EXPECT_EQ(m["5"].exit_signal, 0);
  EXPECT_EQ(m["6"].nodes, "");  // "None assigned"
  EXPECT_EQ(m["6"].reason, "Dependency");
  EXPECT_EQ(m["5"].start, "2026-12-02T14:37:49");
  EXPECT_EQ(m["5"].source, "sacct");
}

TEST(slurm_parse, sacct_skips_job_steps) {
  auto v = parse_sacct(data("sacct_steps.txt"));
  ASSERT_EQ(v.size(), 3u);
  for (const auto& j : v) EXPECT_EQ(j.job_id.find('.'), std::string::npos);
}

TEST(slurm_parse, squeue_recorded_states_and_wait_status) {
  auto m = by_id(parse_squeue(data("squeue_states.txt")));
  ASSERT_EQ(m.size(), 7u);
  EXPECT_EQ(m["3"].state, job_state::timeout);
  EXPECT_EQ(m["3"].reason, "TimeLimit");
  EXPECT_EQ(m["3"].exit_signal, 15);
  EXPECT_EQ(m["3"].exit_status, -1);
  EXPECT_DOUBLE_EQ(m["3"].elapsed_s, 77);
  EXPECT_EQ(m["5"].exit_status, 3);  // raw 768 = 3 << 8
  EXPECT_EQ(m["9"].state, job_state::pending);
  EXPECT_EQ(m["9"].reason, "DependencyNeverSatisfied");
  EXPECT_EQ(m["9"].exit_status, -1);  // not ended: the 0 means nothing
  EXPECT_EQ(m["9"].start, "");        // N/A
}

TEST(slurm_parse, squeue_default_columns_without_exit_code) {
  auto m = by_id(parse_squeue(data("squeue_lag.txt")));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m["8"].state, job_state::running);
  EXPECT_EQ(m["8"].nodes, "magpienode");
  EXPECT_EQ(m["8"].end, "");  // NONE
}

TEST(slurm_parse, recorded_magpie_batch) {
  auto sq = by_id(parse_squeue(data("squeue_batch.txt")));
  auto sa = by_id(parse_sacct(data("sacct_batch.txt")));
  ASSERT_EQ(sq.size(), 6u);
  ASSERT_EQ(sa.size(), 6u);
  auto timeout = merge_job_views(&sq["21"], &sa["21"], "21");
  EXPECT_EQ(timeout.state, job_state::timeout);
  EXPECT_EQ(timeout.exit_signal, 15);  // squeue's wait status wins over sacct's 0:0
  EXPECT_EQ(timeout.source, "squeue+sacct");
  auto broken = merge_job_views(&sq["20"], &sa["20"], "20");
  EXPECT_EQ(broken.exit_status, 1);
  EXPECT_EQ(merge_job_views(&sq["22"], &sa["22"], "22").state_text, "CANCELLED by 0");  // sacct says who
  EXPECT_EQ(sa["22"].name, "magpie-k03_cancelled");
}

TEST(slurm_parse, table_tolerates_blank_lines_and_short_rows) {
  auto rows = parse_table("\nA|b|\n1|2|\n\n3\n", '|');
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["B"], "2");
  EXPECT_EQ(rows[1]["A"], "3");
  EXPECT_EQ(rows[1]["B"], "");
}
