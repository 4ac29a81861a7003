#include "sched/ray_jobs_protocol.h"

#include <cstdlib>
#include <ctime>

#include "core/states.h"
#include "core/strings.h"

namespace magpie::sched {

status_or<net::endpoint_url> resolve_ray_address(const std::string& cluster_address) {
  std::string a(trim(cluster_address));
  if (a.empty() || to_lower(a) == "auto") {
    const char* api = std::getenv("RAY_API_SERVER_ADDRESS");
    const char* ray = std::getenv("RAY_ADDRESS");
    if (api && *api) a = api;
    else if (ray && starts_with(ray, "http://")) a = ray;
    else a = "http://127.0.0.1:8265";
  }
  if (starts_with(a, "ray://")) {
    std::string host = a.substr(6);
    host = host.substr(0, host.find_first_of(":/"));
    a = "http://" + host + ":8265";  // Ray Client port → the dashboard's default port
  } else if (a.find("://") == std::string::npos) {
    a = "http://" + a;
  }
  auto url = net::parse_base_url(a);
  if (!url.ok())
    return invalid_argument("ray_config.cluster_address '%s': %s (expected the dashboard's http://HOST:PORT)",
                            cluster_address.c_str(), url.get_status().message().c_str());
  return url;
}

job_state ray_status_state(std::string_view status, int exit_code) {
  auto s = parse_task_status(status);
  if (!s) return job_state::unknown;
  switch (*s) {
    case task_status::pending: return job_state::pending;
    case task_status::running: return job_state::running;
    case task_status::succeeded: return job_state::completed;
    case task_status::stopped: return job_state::cancelled;
    case task_status::failed: return exit_code == 124 ? job_state::timeout : job_state::failed;
    case task_status::submitted:
    case task_status::unknown: break;
  }
  return job_state::unknown;
}

namespace {

std::string iso_from_ms(const json& j, const char* key) {
  const json* v = json_member(j, key);
  auto ms = v ? json_as_number(*v) : std::nullopt;
  if (!ms) return "";
  std::time_t t = static_cast<std::time_t>(*ms / 1000.0);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// At most `n` characters, "..." marking a cut.
std::string clipped(std::string s, size_t n) {
  return s.size() > n ? strprintf("%.*s...", static_cast<int>(n - 3), s.c_str()) : s;
}

// Ray's message repeats the job's last log lines after the first line; the first says why.
std::string first_line_of(const std::string& s) {
  std::string t(trim(s));
  size_t nl = t.find('\n');
  if (nl != std::string::npos) t.resize(nl);
  return clipped(std::move(t), 240);
}

// A Ray error body: "Job x does not exist", or a traceback whose last line names the exception.
std::string error_text(const std::string& body) {
  std::string last;
  for (const auto& line : split(body, '\n'))
    if (!trim(line).empty() && trim(line) != ".") last = std::string(trim(line));
  return last.empty() ? "(empty body)" : clipped(std::move(last), 300);
}

}  // namespace

job_info parse_ray_job(const json& d) {
  job_info j;
  j.job_id = json_string(d, "submission_id");
  j.name = json_string(json_value(d, "metadata"), "magpie_job");
  std::string st = json_string(d, "status");
  if (const json* code = json_member(d, "driver_exit_code"); code && code->is_number_integer())
    j.exit_status = static_cast<int>(json_int(d, "driver_exit_code", -1));
  j.state = ray_status_state(st, j.exit_status);
  j.state_text = st;
  if (j.state == job_state::timeout) j.reason = "TimeLimit";
  else if (j.state == job_state::failed || j.state == job_state::cancelled) j.reason = first_line_of(json_string(d, "message"));
  j.nodes = json_string(json_value(d, "driver_info"), "node_ip_address");
  if (std::string agent = json_string(d, "driver_agent_http_address"); j.nodes.empty() && !agent.empty()) {
    auto u = net::parse_base_url(agent);
    if (u.ok()) j.nodes = u->host;
  }
  j.start = iso_from_ms(d, "start_time");
  j.end = iso_from_ms(d, "end_time");
  auto start_ms = json_as_number(json_value(d, "start_time")), end_ms = json_as_number(json_value(d, "end_time"));
  if (start_ms && end_ms) j.elapsed_s = (*end_ms - *start_ms) / 1000.0;
  j.source = "ray";
  return j;
}

ray_client::ray_client(net::endpoint_url dashboard, double timeout_s) : m_url(std::move(dashboard)) {
  m_http = [url = m_url, timeout_s](const std::string& method, const std::string& target, const std::string& body) {
    return net::http_call(url, method, target, body, timeout_s);
  };
}

ray_client::ray_client(net::endpoint_url dashboard, http_transport transport)
    : m_url(std::move(dashboard)), m_http(std::move(transport)) {}

status_or<json> ray_client::call(const std::string& method, const std::string& target, const std::string& body) {
  std::string what = method + " " + m_url.to_string() + target;
  auto r = m_http(method, target, body);
  if (!r.ok())
    return status(r.get_status().code(),
                  "the Ray dashboard did not answer: " + r.get_status().message() +
                      " (is the cluster up, and is ray_config.cluster_address / --ray-address its dashboard's "
                      "http://HOST:PORT?)");
  if (r->status == 404) return not_found("%s: %s", what.c_str(), error_text(r->body).c_str());
  // Ray answered and refused (400 bad request, 500 with the exception, e.g. a duplicate
  // submission id): not an outage, so not `unavailable` (which callers retry).
  if (r->status != 200)
    return error(status_code::failed_precondition, "%s: HTTP %d: %s", what.c_str(), r->status, error_text(r->body).c_str());
  auto j = parse_json(r->body);
  if (!j.ok()) return parse_error("%s: the answer is not JSON (is this a Ray dashboard?): %s", what.c_str(),
                                  first_line_of(r->body).c_str());
  return *j;
}

status_or<std::string> ray_client::version() {
  MAGPIE_ASSIGN_OR_RETURN(json j, call("GET", "/api/version", ""));
  std::string v = json_string(j, "ray_version");
  if (v.empty()) return parse_error("%s/api/version: no ray_version (is this a Ray dashboard?)", m_url.to_string().c_str());
  return v;
}

status_or<std::string> ray_client::submit(const json& request) {
  MAGPIE_ASSIGN_OR_RETURN(json j, call("POST", "/api/jobs/", dump_compact(request)));
  std::string id = json_string(j, "submission_id", json_string(j, "job_id"));
  if (id.empty()) return parse_error("POST %s/api/jobs/: no submission_id in the answer", m_url.to_string().c_str());
  return id;
}

status_or<job_info> ray_client::info(const std::string& id) {
  MAGPIE_ASSIGN_OR_RETURN(json j, call("GET", "/api/jobs/" + id, ""));
  return parse_ray_job(j);
}

status_or<std::string> ray_client::logs(const std::string& id) {
  MAGPIE_ASSIGN_OR_RETURN(json j, call("GET", "/api/jobs/" + id + "/logs", ""));
  return json_string(j, "logs");
}

status_or<bool> ray_client::stop(const std::string& id) {
  MAGPIE_ASSIGN_OR_RETURN(json j, call("POST", "/api/jobs/" + id + "/stop", ""));
  return json_bool(j, "stopped", false);
}

}  // namespace magpie::sched
