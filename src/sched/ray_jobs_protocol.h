// The Ray Jobs REST API of a Ray dashboard (Ray >= 2.x, verified with 2.60.0):
//   GET  /api/version                  {version, ray_version, ray_commit, session_name}
//   POST /api/jobs/                    {entrypoint, submission_id, runtime_env, metadata,
//                                       entrypoint_num_cpus, entrypoint_num_gpus} → {submission_id}
//   GET  /api/jobs/{id}                JobDetails {status, message, start_time, end_time (ms),
//                                       driver_exit_code, driver_info, driver_node_id, ...}
//   GET  /api/jobs/{id}/logs           {logs}
//   POST /api/jobs/{id}/stop           {stopped}
// Errors come back as text/plain bodies (404 "Job x does not exist", 400/500 Python tracebacks).
// The transport is injectable so the client is tested on recorded responses.
// A protocol edge (scripts/boundaries.py): the JSON here is Ray's wire format — the job request
// batch.json keeps (job_record::ray_request) and the JobDetails decoded into the typed job_info.
// Above this file the Ray engine (engine.cpp) hands job_info and job_state around.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "core/json.h"
#include "net/http.h"
#include "sched/slurm_parse.h"

namespace magpie::sched {

/// Sends one request (method, target below the dashboard URL, JSON body or "").
using http_transport = std::function<status_or<net::http_response>(const std::string& method, const std::string& target,
                                                                   const std::string& body)>;

/// The dashboard URL for ray_config.cluster_address: "" / "auto" → $RAY_API_SERVER_ADDRESS, else
/// $RAY_ADDRESS when it is an http:// URL, else http://127.0.0.1:8265; "http://H:P" as given;
/// "ray://H:P" (Ray Client) and "H:P" → http://H:8265 and http://H:P. https is rejected.
status_or<net::endpoint_url> resolve_ray_address(const std::string& cluster_address);

/// Ray's job status → our state: PENDING, RUNNING, SUCCEEDED (completed), STOPPED (cancelled),
/// FAILED (failed; timeout when the entrypoint exited 124, the `timeout` wrapper's code).
job_state ray_status_state(std::string_view status, int exit_code);
/// One JobDetails object → job_info (job_id = submission_id, source "ray").
job_info parse_ray_job(const json& details);

class ray_client {
 public:
  /// The real transport: net::http_call to `dashboard`, `timeout_s` per request.
  explicit ray_client(net::endpoint_url dashboard, double timeout_s = 15);
  ray_client(net::endpoint_url dashboard, http_transport transport);

  /// GET /api/version: the Ray version the dashboard runs. Errors name the address.
  status_or<std::string> version();
  /// POST /api/jobs/ with `request` (submission_id included); returns the submission id.
  status_or<std::string> submit(const json& request);
  /// GET /api/jobs/{id}; not_found when the cluster does not know the id.
  status_or<job_info> info(const std::string& id);
  /// GET /api/jobs/{id}/logs.
  status_or<std::string> logs(const std::string& id);
  /// POST /api/jobs/{id}/stop; false when the job had already ended.
  status_or<bool> stop(const std::string& id);
  const net::endpoint_url& url() const { return m_url; }

 private:
  status_or<json> call(const std::string& method, const std::string& target, const std::string& body);
  net::endpoint_url m_url;
  http_transport m_http;
};

}  // namespace magpie::sched
