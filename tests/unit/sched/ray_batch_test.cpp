// Ray batches: planning (the POST bodies), deferred submission of jobs that start after
// others (Ray has no dependencies), cancellation of jobs not yet submitted, ray_config parsing.
#include <gtest/gtest.h>

#include "core/strings.h"
#include "sched/batch.h"
#include "sched/engine.h"
#include "sched/merge.h"
#include "sched/merge_report_writer.h"
#include "sched/monitor.h"
#include "unit/sched/sched_test_util.h"

using namespace magpie;
using namespace magpie::kernel;
using namespace magpie::sched;

namespace {

magpie::sched_test::test_request ray_request(const std::string& mode, int n) { return magpie::sched_test::request(mode, n, "ray"); }

// A dashboard whose jobs take the states the test sets; every submission is recorded.
struct fake_cluster {
  std::vector<json> submitted;
  std::map<std::string, std::string> status;  ///< submission id → Ray status
  std::vector<std::string> stopped;
  http_transport transport() {
    return [this](const std::string& m, const std::string& t, const std::string& b) -> status_or<net::http_response> {
      if (m == "POST" && t == "/api/jobs/") {
        json req = parse_json(b).value();
        submitted.push_back(req);
        status[req["submission_id"]] = "PENDING";
        return net::http_response{200, json{{"submission_id", req["submission_id"]}}.dump(), "application/json"};
      }
      for (auto& [id, st] : status) {
        if (t == "/api/jobs/" + id && m == "GET")
          return net::http_response{200, json{{"submission_id", id}, {"status", st}, {"driver_exit_code", nullptr}}.dump(),
                                    "application/json"};
        if (t == "/api/jobs/" + id + "/stop") {
          stopped.push_back(id);
          st = "STOPPED";
          return net::http_response{200, "{\"stopped\": true}", "application/json"};
        }
        if (t == "/api/jobs/" + id + "/logs") return net::http_response{200, "{\"logs\": \"log of " + id + "\"}", ""};
      }
      return net::http_response{404, "Job does not exist", "text/plain"};
    };
  }
  std::unique_ptr<engine> make() {
    return make_ray_engine(ray_client(net::parse_base_url("http://127.0.0.1:8265").value(), transport()));
  }
  std::string id_of(const std::string& job) const {
    for (const auto& s : submitted)
      if (s["metadata"]["magpie_job"] == job) return s["submission_id"];
    return "";
  }
};

}  // namespace

TEST(ray_batch, plan_writes_ray_requests) {
  auto req = ray_request("compare", 3);
  req.kernels[2].type = kernel_type::cuda;
  req.scheduler.time_limit = "1:30";  // 90 s
  req.scheduler.ray.env_vars = {{"HF_HOME", "/shared/hf"}};
  req.scheduler.ray.metadata = {{"owner", "me"}};
  auto b = plan_kernel_batch(req, req.scheduler);
  ASSERT_TRUE(b.ok()) << b.get_status().message();
  EXPECT_EQ(b->engine, engine_kind::ray);
  EXPECT_EQ(b->ray_address, "http://127.0.0.1:8265");
  for (const auto& j : b->jobs) {
    EXPECT_TRUE(j.sbatch_args.empty()) << j.name;
    const json& r = j.ray_request;
    ASSERT_TRUE(r.is_object()) << j.name;
    EXPECT_EQ(r["entrypoint"], "cd " + shell_quote(j.dir.string()) + " && exec timeout --kill-after=30 90 /bin/bash " +
                                   shell_quote((j.dir / "job.sh").string()));
    EXPECT_EQ(r["entrypoint_num_cpus"], 1.0);
    EXPECT_EQ(r["runtime_env"]["env_vars"]["HF_HOME"], "/shared/hf");
    EXPECT_EQ(r["metadata"]["magpie_job"], j.name);
    EXPECT_EQ(r["metadata"]["magpie_batch"], b->dir.filename().string());
    EXPECT_EQ(r["metadata"]["owner"], "me");
  }
  EXPECT_EQ(b->find("k01_k1")->ray_request["entrypoint_num_gpus"], 0.0);  // host kernel
  EXPECT_EQ(b->find("k02_k2")->ray_request["entrypoint_num_gpus"], 1.0);  // cuda kernel
  EXPECT_EQ(b->find("timing")->ray_request["entrypoint_num_gpus"], 1.0);
  auto again = batch::load(b->dir).value();
  EXPECT_EQ(again.engine, engine_kind::ray);
  EXPECT_EQ(again.jobs[1].engine, engine_kind::ray);
  EXPECT_EQ(again.jobs[1].ray_request, b->jobs[1].ray_request);

  req.scheduler.ray.entrypoint_num_gpus = 0.5;
  req.scheduler.ray.entrypoint_num_cpus = 4;
  req.scheduler.time_limit = "UNLIMITED";
  auto c = plan_kernel_batch(req, req.scheduler).value();
  EXPECT_EQ(c.find("k02_k2")->ray_request["entrypoint_num_gpus"], 0.5);
  EXPECT_EQ(c.find("k01_k1")->ray_request["entrypoint_num_cpus"], 4.0);
  EXPECT_EQ(c.find("k01_k1")->ray_request["entrypoint"].get<std::string>().find("timeout"), std::string::npos);
}

TEST(ray_batch, dependent_jobs_are_submitted_when_their_dependencies_end) {
  auto req = ray_request("compare", 3);
  auto b = plan_kernel_batch(req, req.scheduler).value();
  fake_cluster f;
  auto e = f.make();
  ASSERT_TRUE(submit_batch(b, *e).ok());
  ASSERT_EQ(f.submitted.size(), 1u);  // only the reference: every other job starts after it
  EXPECT_EQ(f.submitted[0]["metadata"]["magpie_job"], "reference");
  ASSERT_EQ(b.token.size(), 8u);
  EXPECT_EQ(f.submitted[0]["submission_id"], "magpie-" + b.dir.filename().string() + "-" + b.token + "-reference");
  EXPECT_TRUE(b.find("k01_k1")->deferred);
  EXPECT_FALSE(job_settled(*b.find("k01_k1")));  // a deferred job is not "never submitted"
  EXPECT_TRUE(batch::load(b.dir).value().find("timing")->deferred);

  f.status[f.id_of("reference")] = "RUNNING";
  ASSERT_TRUE(refresh_batch(b, *e).ok());
  EXPECT_EQ(f.submitted.size(), 1u);
  f.status[f.id_of("reference")] = "SUCCEEDED";
  auto changed = refresh_batch(b, *e).value();
  EXPECT_EQ(f.submitted.size(), 3u);  // k01, k02 now; timing waits for them
  EXPECT_EQ(b.find("reference")->last.state, job_state::completed);
  EXPECT_TRUE(fs::exists(b.find("reference")->dir / ("ray-" + f.id_of("reference") + ".out")));  // log saved
  EXPECT_FALSE(b.find("k01_k1")->deferred);
  EXPECT_TRUE(b.find("timing")->deferred);
  f.status[f.id_of("k01_k1")] = "FAILED";
  ASSERT_TRUE(refresh_batch(b, *e).ok());
  EXPECT_EQ(f.submitted.size(), 3u);
  f.status[f.id_of("k02_k2")] = "STOPPED";  // afterany: any end counts
  ASSERT_TRUE(refresh_batch(b, *e).ok());
  ASSERT_EQ(f.submitted.size(), 4u);
  EXPECT_EQ(f.submitted[3]["metadata"]["magpie_job"], "timing");
}

// Two batches planned in the same second under different output directories have equal
// directory names. On one cluster their jobs must still be two jobs: before the batch token,
// the second batch's reference was taken for the first one's ("already exists", adopted) and
// cancelling either batch stopped both.
TEST(ray_batch, same_second_batches_in_two_directories_get_distinct_submission_ids) {
  auto r1 = ray_request("compare", 2);
  auto r2 = ray_request("compare", 2);
  auto a = plan_kernel_batch(r1, r1.scheduler).value();
  auto b = plan_kernel_batch(r2, r2.scheduler).value();
  fs::path same = b.dir.parent_path() / a.dir.filename();  // the same-second name, in another directory
  if (same != b.dir) {
    fs::rename(b.dir, same);
    b.dir = same;
  }
  fake_cluster f;
  auto e = f.make();
  ASSERT_TRUE(submit_batch(a, *e).ok());
  ASSERT_TRUE(submit_batch(b, *e).ok());
  ASSERT_EQ(f.submitted.size(), 2u);
  EXPECT_NE(f.submitted[0]["submission_id"], f.submitted[1]["submission_id"]);
  EXPECT_NE(a.find("reference")->job_id, b.find("reference")->job_id);
  EXPECT_EQ(batch::load(a.dir).value().token, a.token);  // kept in batch.json: every tracker derives the same id
  ASSERT_TRUE(cancel_jobs(a, *e, {}).ok());
  EXPECT_EQ(f.stopped, std::vector<std::string>{a.find("reference")->job_id});
}

TEST(ray_batch, cancel_stops_running_jobs_and_never_submits_deferred_ones) {
  auto req = ray_request("compare", 2);
  auto b = plan_kernel_batch(req, req.scheduler).value();
  fake_cluster f;
  auto e = f.make();
  ASSERT_TRUE(submit_batch(b, *e).ok());
  f.status[f.id_of("reference")] = "RUNNING";
  ASSERT_TRUE(refresh_batch(b, *e).ok());
  ASSERT_TRUE(cancel_jobs(b, *e, {}).ok());
  EXPECT_EQ(f.stopped, std::vector<std::string>{f.id_of("reference")});
  const job_record* k = b.find("k01_k1");
  EXPECT_FALSE(k->deferred);
  EXPECT_EQ(k->last.state, job_state::cancelled);
  EXPECT_TRUE(job_settled(*k));
  ASSERT_TRUE(refresh_batch(b, *e).ok());
  EXPECT_EQ(f.submitted.size(), 1u);  // nothing submitted after the cancel
  EXPECT_EQ(batch::load(b.dir).value().find("k01_k1")->submit_error, "cancelled before it was submitted");
}

TEST(ray_batch, engine_for_and_old_batches) {
  scheduler_options so;
  engine_kind kind = engine_kind::ray;
  std::string cfg = "stale";
  ASSERT_TRUE(engine_for(so, &kind, &cfg).ok());
  EXPECT_EQ(kind, engine_kind::slurm);
  EXPECT_EQ(cfg, "");
  so.environment = run_environment::ray;
  so.ray.cluster_address = "ray://head:10001";
  ASSERT_TRUE(engine_for(so, &kind, &cfg).ok());
  EXPECT_EQ(kind, engine_kind::ray);
  EXPECT_EQ(cfg, "http://head:8265");
  so.ray.cluster_address = "https://head";
  EXPECT_FALSE(engine_for(so, &kind, &cfg).ok());
  // batch.json written before the Ray engine existed has no "engine": it is a Slurm batch.
  fs::path dir = make_temp_dir("/tmp", "magpie_old_batch_").value();
  ASSERT_TRUE(write_json_file(dir / "batch.json", json{{"mode", "compare"}, {"jobs", json::array()}}).ok());
  EXPECT_EQ(batch::load(dir).value().engine, engine_kind::slurm);
  ASSERT_TRUE(write_json_file(dir / "batch.json", json{{"engine", "k8s"}, {"jobs", json::array()}}).ok());
  auto unknown = batch::load(dir);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.get_status().message().find("batch.json: unknown engine 'k8s' (slurm, ray)"), std::string::npos)
      << unknown.get_status().message();
}

TEST(ray_config, magpie_fields) {
  auto root = parse_yaml(
                  "ray_config:\n  cluster_address: auto\n  shared_storage_path: /nfs/magpie\n  entrypoint_num_gpus: 2\n"
                  "  entrypoint_num_cpus: 16\n  env_vars: {HF_HOME: /nfs/hf}\n  metadata: {team: perf}\n"
                  "  runtime_env: {env_vars: {A: '1'}, working_dir: /nfs/code}\n  pip_packages: []\n  multi_node: false\n",
                  "r.yaml")
                  .value();
  scheduler_options so;
  ASSERT_TRUE(parse_ray_config(*root.get("ray_config"), "ray_config", &so).ok());
  EXPECT_EQ(so.ray.cluster_address, "");  // auto
  EXPECT_EQ(so.shared_dir, "/nfs/magpie");
  EXPECT_EQ(so.ray.entrypoint_num_gpus, 2);
  EXPECT_EQ(so.ray.entrypoint_num_cpus, 16);
  EXPECT_EQ(so.ray.env_vars, (env_list{{"HF_HOME", "/nfs/hf"}, {"A", "1"}}));
  EXPECT_EQ(so.ray.metadata, (env_list{{"team", "perf"}}));
  EXPECT_EQ(so.ray.runtime_env, (json{{"working_dir", "/nfs/code"}}));
  scheduler_options keep;
  keep.shared_dir = "/cli/dir";  // --shared-dir given first wins
  ASSERT_TRUE(parse_ray_config(*root.get("ray_config"), "ray_config", &keep).ok());
  EXPECT_EQ(keep.shared_dir, "/cli/dir");
  auto bad = parse_yaml("ray_config: {entrypoint_num_gpus: -1}\n", "b.yaml").value();
  auto st = parse_ray_config(*bad.get("ray_config"), "ray_config", &so);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("b.yaml:1"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("ray_config.entrypoint_num_gpus"), std::string::npos) << st.message();
  auto unknown = parse_yaml("ray_config: {clustr_address: x}\n", "u.yaml").value();
  EXPECT_FALSE(parse_ray_config(*unknown.get("ray_config"), "ray_config", &so).ok());
}

TEST(ray_batch, merged_rows_name_the_ray_job_and_its_log) {
  auto req = ray_request("compare", 2);
  req.performance.enabled = false;
  auto b = plan_kernel_batch(req, req.scheduler).value();
  job_record* k = b.find("k01_k1");
  k->job_id = "magpie-x-k01_k1";
  k->last.state = job_state::timeout;
  k->last.reason = "TimeLimit";
  k->last.exit_status = 124;
  EXPECT_EQ(job_log_path(*k), k->dir / "ray-magpie-x-k01_k1.out");
  json row = missing_kernel_row(req.kernels[1], k, "");
  std::string err = row["errors"][0];
  EXPECT_NE(err.find("ray job magpie-x-k01_k1 (k01_k1) ended TIMEOUT (TimeLimit), exit code 124"), std::string::npos) << err;
  EXPECT_NE(err.find((k->dir / "ray-magpie-x-k01_k1.out").string()), std::string::npos) << err;
  EXPECT_EQ(row["outcome"], "timeout");
  json sched = scheduler_section(b, req);
  EXPECT_EQ(sched["environment"], "ray");
  EXPECT_EQ(sched["ray_address"], "http://127.0.0.1:8265");
  EXPECT_NE(jobs_table(b).find("RAY ID"), std::string::npos);
}

TEST(ray_batch, batch_status_words) {
  auto req = ray_request("compare", 2);
  req.performance.enabled = false;
  auto b = plan_kernel_batch(req, req.scheduler).value();
  EXPECT_EQ(task_status_name(batch_status(b)), std::string("FAILED"));  // planned, never submitted: nothing ran
  b.jobs[0].job_id = "r";
  b.jobs[0].last.state = job_state::running;
  EXPECT_EQ(task_status_name(batch_status(b)), std::string("RUNNING"));
  b.jobs[0].last.state = job_state::completed;
  b.jobs[1].job_id = "k";
  b.jobs[1].last.state = job_state::failed;
  b.jobs[1].last.exit_status = 1;  // the kernel is not correct: an outcome
  EXPECT_EQ(task_status_name(batch_status(b)), std::string("SUCCEEDED"));
  b.jobs[1].last.exit_status = 2;  // the task could not run
  EXPECT_EQ(task_status_name(batch_status(b)), std::string("FAILED"));
  b.jobs[1].last.state = job_state::timeout;
  EXPECT_EQ(task_status_name(batch_status(b)), std::string("FAILED"));
}
