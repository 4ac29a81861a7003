// Planning (jobs, dependencies, sbatch arguments, scripts) and submission with a fake sbatch.
#include "sched/batch.h"

#include <gtest/gtest.h>

#include "core/strings.h"
#include "sched/batch_codec.h"
#include "sched/engine.h"
#include "unit/sched/sched_test_util.h"

using namespace magpie;
using namespace magpie::kernel;
using namespace magpie::sched;
using magpie::sched_test::request;
using magpie::sched_test::spec;

namespace {

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }
bool has_prefix(const std::vector<std::string>& v, const std::string& p) {
  for (const auto& x : v)
    if (starts_with(x, p)) return true;
  return false;
}

}  // namespace

TEST(batch, compare_plan_reference_kernels_timing) {
  auto req = request("compare", 3);
  req.correctness.seed = 99;
  auto b = plan_kernel_batch(req, req.scheduler);
  ASSERT_TRUE(b.ok()) << b.get_status().message();
  ASSERT_EQ(b->jobs.size(), 4u);
  EXPECT_EQ(b->jobs[0].name, "reference");
  EXPECT_EQ(b->jobs[1].name, "k01_k1");
  EXPECT_EQ(b->jobs[1].kernels, std::vector<int>{1});
  EXPECT_EQ(b->jobs[1].after, std::vector<std::string>{"reference"});
  EXPECT_EQ(b->jobs[3].name, "timing");
  EXPECT_TRUE(has(b->jobs[3].after, "k01_k1") && has(b->jobs[3].after, "k02_k2"));
  EXPECT_EQ(b->run_seed, 99u);
  for (const auto& j : b->jobs) {
    EXPECT_FALSE(has_prefix(j.sbatch_args, "--gres")) << j.name;  // host kernels request no GPU
    EXPECT_TRUE(has(j.sbatch_args, "--time=00:30:00")) << j.name;
    EXPECT_TRUE(has(j.sbatch_args, "--cpus-per-task=1"));
    EXPECT_TRUE(has(j.sbatch_args, "--output=" + (j.dir / "slurm-%j.out").string()));
    auto script = read_file(j.dir / "job.sh").value();
    EXPECT_NE(script.find("exec " + shell_quote("/opt/magpie/bin/magpie") + " jobs run-task " + shell_quote(j.dir.string())),
              std::string::npos)
        << script;
    EXPECT_NE(script.find("export MAGPIE_NO_STORE=1"), std::string::npos) << script;  // collect registers centrally
    EXPECT_TRUE(fs::exists(j.dir / "task.json"));
  }
  auto again = batch::load(b->dir).value();
  EXPECT_EQ(again.jobs.size(), 4u);
  EXPECT_EQ(again.jobs[3].after, b->jobs[3].after);
  EXPECT_EQ(again.jobs[0].last.state, job_state::not_submitted);
  auto back = load_batch_request(again).value();
  EXPECT_EQ(*back.correctness.seed, 99u);
  json options = batch_options_json(again);  // reported in the merged report; jobs ignore it
  EXPECT_EQ(options["environment"], "slurm");
  EXPECT_EQ(options["magpie_bin"], "/opt/magpie/bin/magpie");
}

TEST(batch, seed_is_fixed_when_unset_and_no_perf_has_no_timing_job) {
  auto req = request("compare", 2);
  req.performance.enabled = false;
  auto b = plan_kernel_batch(req, req.scheduler).value();
  EXPECT_NE(b.run_seed, 0u);
  EXPECT_EQ(*load_batch_request(b).value().correctness.seed, b.run_seed);
  ASSERT_EQ(b.jobs.size(), 2u);  // reference (= baseline 0) and k01
  EXPECT_EQ(b.jobs.back().name, "k01_k1");
}

TEST(batch, separate_reference_and_baseline_get_their_own_jobs) {
  auto req = request("compare", 2);
  req.reference = spec("ref");
  req.baseline_index = 1;
  auto b = plan_kernel_batch(req, req.scheduler).value();
  std::vector<std::string> names;
  for (const auto& j : b.jobs) names.push_back(j.name);
  EXPECT_EQ(names, (std::vector<std::string>{"reference", "k00_k0", "k01_k1", "timing"}));
}

TEST(batch, analyze_without_reference_has_independent_jobs) {
  auto req = request("analyze", 2);
  auto b = plan_kernel_batch(req, req.scheduler).value();
  ASSERT_EQ(b.jobs.size(), 2u);
  for (const auto& j : b.jobs) EXPECT_TRUE(j.after.empty());
  EXPECT_NE(b.dir.filename().string().find("batch_analyze_k0_"), std::string::npos) << b.dir;
}

TEST(batch, gpu_kernels_get_gres_and_site_options) {
  auto req = request("analyze", 1);
  req.kernels.push_back(spec("cu", kernel_type::cuda));
  req.scheduler.partition = "gpu";
  req.scheduler.account = "proj";
  req.scheduler.mem = "16G";
  req.scheduler.sbatch_args = {"--exclusive"};
  req.scheduler.setup = {"module load cuda/13"};
  auto b = plan_kernel_batch(req, req.scheduler).value();
  EXPECT_FALSE(has_prefix(b.jobs[0].sbatch_args, "--gres"));
  EXPECT_TRUE(has(b.jobs[1].sbatch_args, "--gres=gpu:1"));
  EXPECT_TRUE(has(b.jobs[1].sbatch_args, "--partition=gpu"));
  EXPECT_TRUE(has(b.jobs[1].sbatch_args, "--account=proj"));
  EXPECT_TRUE(has(b.jobs[1].sbatch_args, "--mem=16G"));
  EXPECT_TRUE(has(b.jobs[1].sbatch_args, "--exclusive"));
  EXPECT_NE(read_file(b.jobs[1].dir / "job.sh").value().find("module load cuda/13\n"), std::string::npos);
  req.scheduler.gres = "gpu:h200:2";
  auto c = plan_kernel_batch(req, req.scheduler).value();
  EXPECT_TRUE(has(c.jobs[1].sbatch_args, "--gres=gpu:h200:2"));
}

TEST(batch, rejects_bad_time_limits_and_requests) {
  auto req = request("compare", 2);
  req.scheduler.time_limit = "soon";
  EXPECT_FALSE(plan_kernel_batch(req, req.scheduler).ok());
  auto one = request("compare", 1);
  EXPECT_FALSE(plan_kernel_batch(one, one.scheduler).ok());
  auto base = request("compare", 2);
  base.baseline_index = 5;
  EXPECT_FALSE(plan_kernel_batch(base, base.scheduler).ok());
}

TEST(batch, submit_passes_dependencies_by_id_and_cancels_on_failure) {
  auto req = request("compare", 3);
  auto b = plan_kernel_batch(req, req.scheduler).value();
  std::vector<std::vector<std::string>> calls;
  int next = 100;
  int fail_at = -1;
  auto runner = [&](const std::vector<std::string>& argv) -> status_or<run_result> {
    calls.push_back(argv);
    run_result r;
    r.exit_code = 0;
    if (argv[0] == "sbatch") {
      if (next - 100 == fail_at) {
        r.exit_code = 1;
        r.err = "sbatch: error: QOSMaxSubmitJobPerUserLimit\n";
      } else {
        r.out = std::to_string(next) + "\n";
      }
      ++next;
    }
    return r;
  };
  auto c = make_slurm_engine(runner);
  ASSERT_TRUE(submit_batch(b, *c).ok());
  EXPECT_EQ(b.jobs[0].job_id, "100");
  EXPECT_TRUE(has(calls[1], "--dependency=afterany:100"));
  EXPECT_TRUE(has(calls[3], "--dependency=afterany:101:102:100"));
  EXPECT_EQ(calls[3].back(), (b.jobs[3].dir / "job.sh").string());
  EXPECT_EQ(batch::load(b.dir).value().jobs[2].job_id, "102");

  auto b2 = plan_kernel_batch(req, req.scheduler).value();
  calls.clear();
  next = 100;
  fail_at = 2;
  auto st = submit_batch(b2, *c);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("QOSMaxSubmitJobPerUserLimit"), std::string::npos) << st.message();
  EXPECT_EQ(calls.back(), (std::vector<std::string>{"scancel", "100", "101"}));
  auto saved = batch::load(b2.dir).value();
  EXPECT_FALSE(saved.jobs[2].submit_error.empty());
  EXPECT_TRUE(saved.jobs[3].job_id.empty());
}

// batch.json outlives magpie versions and is edited by hand: a mistyped field is an error that
// names the file and the field (batch_codec.cpp), not an exception.
TEST(batch, load_names_the_mistyped_field) {
  auto req = request("compare", 2);
  auto b = plan_kernel_batch(req, req.scheduler).value();
  json j = read_json_file(b.dir / "batch.json").value();
  j["jobs"][1]["last"]["exit_code"] = "zero";
  ASSERT_TRUE(write_json_file(b.dir / "batch.json", j).ok());
  auto bad = batch::load(b.dir);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.get_status().message().find("batch.json: field 'jobs[1].last.exit_code': expected an integer, got string"),
            std::string::npos)
      << bad.get_status().message();
  j["jobs"][1]["last"]["exit_code"] = 3;
  j["jobs"][0]["kernels"] = {1, "x"};
  ASSERT_TRUE(write_json_file(b.dir / "batch.json", j).ok());
  EXPECT_NE(batch::load(b.dir).get_status().message().find("field 'jobs[0].kernels[1]'"), std::string::npos);
  j["jobs"][0]["kernels"] = json::array();
  j["run_seed"] = -4;
  ASSERT_TRUE(write_json_file(b.dir / "batch.json", j).ok());
  EXPECT_NE(batch::load(b.dir).get_status().message().find("field 'run_seed': expected a non-negative integer"),
            std::string::npos);
  j["run_seed"] = 4;
  j["mode"] = "benchmark";
  ASSERT_TRUE(write_json_file(b.dir / "batch.json", j).ok());
  EXPECT_NE(batch::load(b.dir).get_status().message().find("field 'mode': expected analyze, compare or command, got 'benchmark'"),
            std::string::npos)
      << batch::load(b.dir).get_status().message();
  j["mode"] = "compare";
  j["jobs"][1]["role"] = "worker";
  ASSERT_TRUE(write_json_file(b.dir / "batch.json", j).ok());
  EXPECT_NE(batch::load(b.dir).get_status().message().find("field 'jobs[1].role': expected reference, kernel, timing or command"),
            std::string::npos)
      << batch::load(b.dir).get_status().message();
  j["jobs"][1]["role"] = "kernel";
  ASSERT_TRUE(write_json_file(b.dir / "batch.json", j).ok());
  auto good = batch::load(b.dir);
  ASSERT_TRUE(good.ok()) << good.get_status().message();
  EXPECT_EQ(good->jobs[1].last.exit_status, 3);
  EXPECT_EQ(good->mode, batch_mode::compare);
  EXPECT_EQ(good->jobs[0].role, job_role::reference);
  EXPECT_EQ(good->jobs[1].role, job_role::kernel);
}
