// slurm_client against a fake command runner that replays recorded output.
#include "sched/slurm_client.h"

#include <gtest/gtest.h>

#include "core/fs.h"
#include "core/strings.h"

using namespace magpie;
using namespace magpie::sched;

namespace {

std::string data(const std::string& name) {
  return read_file(fs::path(MAGPIE_TEST_SOURCE_DIR) / "tests/unit/sched/data" / name).value();
}

struct fake_slurm {
  std::vector<std::vector<std::string>> calls;
  std::map<std::string, run_result> replies;  ///< by argv[0]
  command_runner runner() {
    return [this](const std::vector<std::string>& argv) -> status_or<run_result> {
      calls.push_back(argv);
      auto it = replies.find(argv[0]);
      if (it == replies.end()) return not_found("no %s", argv[0].c_str());
      return it->second;
    };
  }
  static run_result ok(const std::string& out) {
    run_result r;
    r.exit_code = 0;
    r.out = out;
    return r;
  }
  static run_result err(int code, const std::string& e) {
    run_result r;
    r.exit_code = code;
    r.err = e;
    return r;
  }
};

}  // namespace

TEST(slurm_client, squeue_wins_while_sacct_lags) {
  fake_slurm f;
  f.replies["squeue"] = fake_slurm::ok(data("squeue_lag.txt"));
  f.replies["sacct"] = fake_slurm::ok(data("sacct_lag.txt"));
  slurm_client c(f.runner());
  auto m = c.query({"8", "9"}).value();
  EXPECT_EQ(m["8"].state, job_state::running);  // sacct still says PENDING
  EXPECT_EQ(m["9"].state, job_state::pending);
  ASSERT_EQ(f.calls.size(), 2u);
  EXPECT_EQ(f.calls[0][0], "squeue");
  EXPECT_EQ(f.calls[0][2], "--jobs=8,9");
  EXPECT_EQ(f.calls[1][0], "sacct");
  EXPECT_TRUE(c.accounting_available());
}

TEST(slurm_client, sacct_fills_jobs_squeue_forgot) {
  fake_slurm f;
  f.replies["squeue"] = fake_slurm::err(1, "slurm_load_jobs error: Invalid job id specified\n");
  f.replies["sacct"] = fake_slurm::ok(data("sacct_states.txt"));
  slurm_client c(f.runner());
  auto m = c.query({"3", "5", "77"}).value();
  EXPECT_EQ(m["3"].state, job_state::timeout);
  EXPECT_EQ(m["5"].exit_status, 3);
  EXPECT_EQ(m["77"].state, job_state::unknown);
  EXPECT_EQ(m["77"].source, "none");
}

TEST(slurm_client, accounting_disabled_is_remembered) {
  fake_slurm f;
  f.replies["squeue"] = fake_slurm::ok(data("squeue_states.txt"));
  f.replies["sacct"] = fake_slurm::ok("Slurm accounting storage is disabled\n");
  slurm_client c(f.runner());
  auto m = c.query({"3"}).value();
  EXPECT_EQ(m["3"].state, job_state::timeout);
  EXPECT_FALSE(c.accounting_available());
  f.calls.clear();
  (void)c.query({"3"}).value();
  ASSERT_EQ(f.calls.size(), 1u);  // squeue only
  EXPECT_EQ(f.calls[0][0], "squeue");
}

TEST(slurm_client, controller_outage_is_an_error) {
  fake_slurm f;
  f.replies["squeue"] = fake_slurm::err(1, "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n");
  slurm_client c(f.runner());
  auto m = c.query({"3"});
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(contains(m.get_status().message(), "Unable to contact"));
}

TEST(slurm_client, submit_and_its_errors) {
  fake_slurm f;
  f.replies["sbatch"] = fake_slurm::ok("42\n");
  slurm_client c(f.runner());
  EXPECT_EQ(c.submit("/x/job.sh", {"--time=1", "--dependency=afterany:41"}).value(), "42");
  ASSERT_EQ(f.calls.size(), 1u);
  std::vector<std::string> want = {"sbatch", "--parsable", "--time=1", "--dependency=afterany:41", "/x/job.sh"};
  EXPECT_EQ(f.calls[0], want);
  f.replies["sbatch"] = fake_slurm::err(1, "sbatch: error: invalid partition specified: nope\n"
                                            "sbatch: error: Batch job submission failed: Invalid partition name specified\n");
  auto bad = c.submit("/x/job.sh", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(contains(bad.get_status().message(), "invalid partition specified: nope")) << bad.get_status().message();
}

TEST(slurm_client, cancel_tolerates_finished_jobs) {
  fake_slurm f;
  f.replies["scancel"] = fake_slurm::err(1, "scancel: error: Kill job error on job id 5: Job/step already completing or completed\n");
  slurm_client c(f.runner());
  EXPECT_TRUE(c.cancel({"5"}).ok());
  std::vector<std::string> want = {"scancel", "5"};
  EXPECT_EQ(f.calls[0], want);
  f.replies["scancel"] = fake_slurm::err(1, "scancel: error: Unable to contact slurm controller\n");
  EXPECT_FALSE(c.cancel({"5"}).ok());
  f.calls.clear();
  EXPECT_TRUE(c.cancel({}).ok());
  EXPECT_TRUE(f.calls.empty());
}
