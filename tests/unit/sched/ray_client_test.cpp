// ray_client and the Ray engine over a fake transport that replays responses recorded from a
// real Ray 2.60.0 head (tests/unit/sched/data/ray_2.60.0_responses.json, captured with
// tests/ray/cluster.sh): state mapping, error texts, address resolution.
#include "sched/ray_jobs_protocol.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "core/fs.h"
#include "core/strings.h"
#include "sched/engine.h"

using namespace magpie;
using namespace magpie::sched;

namespace {

const json& recorded() {
  static const json j =
      read_json_file(fs::path(MAGPIE_TEST_SOURCE_DIR) / "tests/unit/sched/data/ray_2.60.0_responses.json").value();
  return j;
}

net::http_response response(const std::string& name) {
  const json& r = recorded().at(name);
  return {r.at("status").get<int>(), r.at("body").get<std::string>(), json_string(r, "content_type")};
}

json body(const std::string& name) { return parse_json(response(name).body).value(); }

// Replies by "METHOD target"; records every request.
struct fake_dashboard {
  std::map<std::string, std::string> routes;  ///< "GET /api/version" → recorded response name
  std::vector<std::pair<std::string, std::string>> calls;  ///< (method + target, body)
  bool down = false;
  http_transport transport() {
    return [this](const std::string& m, const std::string& t, const std::string& b) -> status_or<net::http_response> {
      calls.push_back({m + " " + t, b});
      if (down) return error(status_code::unavailable, "%s http://127.0.0.1:1%s: Connection refused", m.c_str(), t.c_str());
      auto it = routes.find(m + " " + t);
      if (it == routes.end()) return net::http_response{404, "Job x does not exist", "text/plain"};
      return response(it->second);
    };
  }
};

net::endpoint_url dash() { return net::parse_base_url("http://127.0.0.1:8265").value(); }

}  // namespace

TEST(ray_parse, recorded_states_exit_codes_and_times) {
  job_info ok = parse_ray_job(body("info_succeeded"));
  EXPECT_EQ(ok.state, job_state::completed);
  EXPECT_EQ(ok.job_id, "rec-ok");
  EXPECT_EQ(ok.name, "reference");  // metadata.magpie_job
  EXPECT_EQ(ok.exit_status, 0);
  EXPECT_EQ(ok.nodes, "127.0.0.1");
  EXPECT_GT(ok.elapsed_s, 0);
  EXPECT_FALSE(ok.start.empty());
  EXPECT_EQ(ok.source, "ray");

  job_info failed = parse_ray_job(body("info_failed"));
  EXPECT_EQ(failed.state, job_state::failed);
  EXPECT_EQ(failed.exit_status, 3);
  EXPECT_EQ(failed.reason, "Job entrypoint command failed with exit code 3, last available logs (truncated to 20,000 chars):");

  job_info to = parse_ray_job(body("info_timeout"));  // `timeout` killed the entrypoint: exit 124
  EXPECT_EQ(to.state, job_state::timeout);
  EXPECT_EQ(to.reason, "TimeLimit");
  EXPECT_EQ(to.state_text, "FAILED");

  job_info stopped = parse_ray_job(body("info_stopped"));
  EXPECT_EQ(stopped.state, job_state::cancelled);
  EXPECT_EQ(stopped.exit_status, -1);  // driver_exit_code null
  EXPECT_EQ(stopped.reason, "Job was intentionally stopped.");

  EXPECT_EQ(parse_ray_job(body("info_running")).state, job_state::running);
  job_info pending = parse_ray_job(body("info_pending"));
  EXPECT_EQ(pending.state, job_state::pending);
  EXPECT_LT(pending.elapsed_s, 0);
  EXPECT_EQ(ray_status_state("SOMETHING_NEW", 0), job_state::unknown);
  EXPECT_EQ(ray_status_state("FAILED", 137), job_state::failed);
}

TEST(ray_client, requests_and_recorded_answers) {
  fake_dashboard f;
  f.routes = {{"GET /api/version", "version"},         {"POST /api/jobs/", "submit"},
              {"GET /api/jobs/rec-ok", "info_succeeded"}, {"GET /api/jobs/rec-ok/logs", "logs"},
              {"POST /api/jobs/rec-stop/stop", "stop"},   {"POST /api/jobs/old/stop", "stop_ended"}};
  ray_client c(dash(), f.transport());
  EXPECT_EQ(c.version().value(), "2.60.0");
  json req = {{"entrypoint", "echo hi"}, {"submission_id", "rec-ok"}, {"entrypoint_num_cpus", 1}};
  EXPECT_EQ(c.submit(req).value(), "rec-ok");
  EXPECT_EQ(parse_json(f.calls.back().second).value(), req);  // the body is the request, as JSON
  EXPECT_EQ(c.info("rec-ok").value().state, job_state::completed);
  EXPECT_NE(c.logs("rec-ok").value().find("hello from the job"), std::string::npos);
  EXPECT_TRUE(c.stop("rec-stop").value());
  EXPECT_FALSE(c.stop("old").value());  // already ended
  auto unknown = c.info("nope");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.get_status().code(), status_code::not_found);
}

TEST(ray_client, refusals_name_the_exception_and_outages_the_address) {
  fake_dashboard f;
  f.routes = {{"POST /api/jobs/", "submit_duplicate"}};
  ray_client c(dash(), f.transport());
  auto dup = c.submit({{"entrypoint", "true"}, {"submission_id", "rec-ok"}});
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.get_status().code(), status_code::failed_precondition);  // refused: not retried
  EXPECT_NE(dup.get_status().message().find("HTTP 500: ValueError: Job with submission_id rec-ok already exists"),
            std::string::npos)
      << dup.get_status().message();
  f.routes = {{"POST /api/jobs/", "submit_bad_request"}};
  auto bad = c.submit({{"entrypointx", "true"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.get_status().message().find("unexpected keyword argument 'entrypointx'"), std::string::npos)
      << bad.get_status().message();
  f.down = true;
  auto v = c.version();
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.get_status().code(), status_code::unavailable);
  EXPECT_NE(v.get_status().message().find("the Ray dashboard did not answer: GET http://127.0.0.1:1/api/version: Connection refused"),
            std::string::npos)
      << v.get_status().message();
  EXPECT_NE(v.get_status().message().find("--ray-address"), std::string::npos);
  f.down = false;
  f.routes = {{"GET /api/version", "info_unknown"}};  // not a dashboard: 404 text
  EXPECT_FALSE(c.version().ok());
}

TEST(ray_client, address_resolution) {
  ::unsetenv("RAY_API_SERVER_ADDRESS");
  ::unsetenv("RAY_ADDRESS");
  EXPECT_EQ(resolve_ray_address("").value().to_string(), "http://127.0.0.1:8265");
  EXPECT_EQ(resolve_ray_address("auto").value().to_string(), "http://127.0.0.1:8265");
  ::setenv("RAY_ADDRESS", "10.0.0.5:6379", 1);  // a GCS address is not the dashboard: ignored
  EXPECT_EQ(resolve_ray_address("auto").value().to_string(), "http://127.0.0.1:8265");
  ::setenv("RAY_ADDRESS", "http://head:8265", 1);
  EXPECT_EQ(resolve_ray_address("").value().to_string(), "http://head:8265");
  ::setenv("RAY_API_SERVER_ADDRESS", "http://api:9000", 1);
  EXPECT_EQ(resolve_ray_address("auto").value().to_string(), "http://api:9000");
  ::unsetenv("RAY_API_SERVER_ADDRESS");
  ::unsetenv("RAY_ADDRESS");
  EXPECT_EQ(resolve_ray_address("ray://head:10001").value().to_string(), "http://head:8265");
  EXPECT_EQ(resolve_ray_address("head:8266").value().to_string(), "http://head:8266");
  EXPECT_EQ(resolve_ray_address("http://head:8265/").value().to_string(), "http://head:8265");
  auto tls = resolve_ray_address("https://head:8265");
  ASSERT_FALSE(tls.ok());
  EXPECT_NE(tls.get_status().message().find("ray_config.cluster_address"), std::string::npos);
}

TEST(ray_engine, unknown_jobs_and_cancel_of_ended_ones) {
  fake_dashboard f;
  f.routes = {{"GET /api/jobs/rec-stop", "info_running"}, {"POST /api/jobs/rec-stop/stop", "stop"}};
  auto e = make_ray_engine(ray_client(dash(), f.transport()));
  EXPECT_FALSE(e->native_dependencies());
  auto q = e->query({"rec-stop", "forgotten"}).value();
  EXPECT_EQ(q["rec-stop"].state, job_state::running);
  EXPECT_EQ(q["forgotten"].state, job_state::unknown);  // 404: the cluster no longer knows it
  EXPECT_TRUE(e->cancel({"rec-stop", "forgotten"}).ok());
  f.down = true;
  EXPECT_EQ(e->query({"rec-stop"}).get_status().code(), status_code::unavailable);
  EXPECT_FALSE(e->check().ok());
}

TEST(ray_engine, a_job_already_submitted_by_another_tracker_is_adopted) {
  fake_dashboard f;
  f.routes = {{"POST /api/jobs/", "submit_duplicate"}, {"GET /api/jobs/magpie-batch_x-reference", "info_running"}};
  auto e = make_ray_engine(ray_client(dash(), f.transport()));
  batch b;
  b.dir = "/shared/batch_x";
  job_record j;
  j.name = "reference";
  j.ray_request = {{"entrypoint", "true"}};
  EXPECT_EQ(e->submit(b, j, {}).value(), "magpie-batch_x-reference");
  f.routes.erase("GET /api/jobs/magpie-batch_x-reference");  // a duplicate that is not ours to adopt
  EXPECT_FALSE(e->submit(b, j, {}).ok());
}
