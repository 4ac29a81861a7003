// The two engines behind sched::engine: Slurm (slurm_client: sbatch/squeue/sacct/scancel) and
// Ray (ray_client: the dashboard's Jobs REST API).
#include "sched/engine.h"

#include "core/log.h"
#include "core/strings.h"
#include "sched/ray_jobs_protocol.h"
#include "sched/slurm_client.h"

namespace magpie::sched {

fs::path job_log_path(const job_record& j) {
  if (j.job_id.empty()) return {};
  return j.dir / (std::string(engine_kind_name(j.engine)) + "-" + j.job_id + ".out");
}

namespace {

class slurm_engine final : public engine {
 public:
  explicit slurm_engine(command_runner run) : m_client(std::move(run)) {}
  const char* name() const override { return engine_kind_name(engine_kind::slurm); }
  status check() override { return check_slurm_tools(); }
  bool native_dependencies() const override { return true; }
  status_or<std::string> submit(const batch&, const job_record& j, const std::vector<std::string>& after) override {
    std::vector<std::string> args = j.sbatch_args;
    if (!after.empty()) args.push_back("--dependency=afterany:" + join(after, ":"));
    return m_client.submit(j.dir / "job.sh", args);
  }
  status_or<std::map<std::string, job_info>> query(const std::vector<std::string>& ids) override {
    return m_client.query(ids);
  }
  status cancel(const std::vector<std::string>& ids) override { return m_client.cancel(ids); }
  bool confirms_late() const override { return m_client.accounting_available(); }

 private:
  slurm_client m_client;
};

// Submission ids are magpie-<batch dir name>-<batch token>-<job name>: readable in `ray job
// list`, and unique on the cluster even for two batches planned in the same second under
// different shared directories (their dir names are equal; their random tokens are not).
// Batches from builds before the token keep the old <dir>-<job> form they were submitted with.
std::string submission_id(const batch& b, const job_record& j) {
  std::string id = "magpie-" + b.dir.filename().string() + "-" + (b.token.empty() ? "" : b.token + "-") + j.name;
  for (auto& c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  return id;
}

class ray_engine final : public engine {
 public:
  explicit ray_engine(ray_client client) : m_client(std::move(client)) {}
  const char* name() const override { return engine_kind_name(engine_kind::ray); }
  status check() override {
    auto v = m_client.version();
    if (!v.ok()) return v.get_status();
    MAGPIE_LOG_INFO("ray dashboard %s: Ray %s", m_client.url().to_string().c_str(), v->c_str());
    return ok_status();
  }
  bool native_dependencies() const override { return false; }
  status_or<std::string> submit(const batch& b, const job_record& j, const std::vector<std::string>&) override {
    if (!j.ray_request.is_object())
      return error(status_code::internal, "job '%s' has no Ray request (planned for another engine?)", j.name.c_str());
    json req = j.ray_request;
    std::string id = submission_id(b, j);
    req["submission_id"] = id;
    auto r = m_client.submit(req);
    // Another magpie tracking the same batch (a `jobs status` beside a waiting run) may have
    // submitted it first: the id is deterministic, so the job on the cluster is this one.
    if (!r.ok() && contains(r.get_status().message(), "already exists") && m_client.info(id).ok()) return id;
    return r;
  }
  status_or<std::map<std::string, job_info>> query(const std::vector<std::string>& ids) override {
    std::map<std::string, job_info> out;
    for (const auto& id : ids) {
      auto info = m_client.info(id);
      if (info.ok()) {
        out[id] = *info;
      } else if (info.get_status().code() == status_code::not_found) {
        job_info unknown;  // the cluster restarted, or the job was deleted
        unknown.job_id = id;
        unknown.source = "none";
        out[id] = unknown;
      } else {
        return info.get_status();
      }
    }
    return out;
  }
  status cancel(const std::vector<std::string>& ids) override {
    for (const auto& id : ids) {
      auto r = m_client.stop(id);
      if (!r.ok() && r.get_status().code() != status_code::not_found) return r.get_status();
    }
    return ok_status();
  }
  void save_log(const job_record& j) override {
    auto text = m_client.logs(j.job_id);
    if (!text.ok()) {
      MAGPIE_LOG_WARN("[%s] could not fetch the Ray job's log: %s", j.name.c_str(), text.get_status().message().c_str());
      return;
    }
    if (auto st = write_file_atomic(job_log_path(j), *text); !st.ok()) MAGPIE_LOG_WARN("%s", st.message().c_str());
  }

 private:
  ray_client m_client;
};

}  // namespace

std::unique_ptr<engine> make_slurm_engine(command_runner run) { return std::make_unique<slurm_engine>(std::move(run)); }
std::unique_ptr<engine> make_ray_engine(ray_client client) { return std::make_unique<ray_engine>(std::move(client)); }

status_or<std::unique_ptr<engine>> make_engine(engine_kind kind, const std::string& ray_address) {
  if (kind == engine_kind::slurm) return make_slurm_engine(default_runner());
  MAGPIE_ASSIGN_OR_RETURN(net::endpoint_url url, resolve_ray_address(ray_address));
  return make_ray_engine(ray_client(url));
}

status_or<std::unique_ptr<engine>> make_engine(const batch& b) { return make_engine(b.engine, b.ray_address); }

}  // namespace magpie::sched
