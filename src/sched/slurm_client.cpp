#include "sched/slurm_client.h"

#include "core/log.h"
#include "core/strings.h"

namespace magpie::sched {

command_runner default_runner(double timeout_s) {
  return [timeout_s](const std::vector<std::string>& argv) -> status_or<run_result> {
    spawn_spec sp;
    sp.argv = argv;
    return run_command(sp, timeout_s);
  };
}

slurm_client::slurm_client(command_runner run) : m_run(std::move(run)) {}

namespace {

std::string first_line(const std::string& s) {
  std::string t(trim(s));
  size_t nl = t.find('\n');
  return nl == std::string::npos ? t : t.substr(0, nl);
}

std::string why(const run_result& r) {
  std::string msg = first_line(r.err.empty() ? r.out : r.err);
  return msg.empty() ? r.describe() : msg + " (" + r.describe() + ")";
}

}  // namespace

status_or<std::string> slurm_client::submit(const fs::path& script, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(script.string());
  MAGPIE_ASSIGN_OR_RETURN(run_result r, m_run(argv));
  if (!r.success()) return error(status_code::unavailable, "sbatch failed: %s", why(r).c_str());
  return parse_sbatch_parsable(r.out);
}

job_info merge_job_views(const job_info* sq, const job_info* sa, const std::string& id) {
  if (!sq && !sa) {
    job_info j;
    j.job_id = id;
    j.source = "none";
    return j;
  }
  if (!sq) return *sa;
  job_info j = *sq;
  if (sa && is_terminal(sa->state) && is_terminal(sq->state)) {
    // squeue's raw wait status shows the signal that ended a timed-out or cancelled job, where
    // sacct's allocation line says 0:0; sacct only fills in what squeue did not print.
    if (j.exit_status < 0 && j.exit_signal == 0) {
      j.exit_status = sa->exit_status;
      j.exit_signal = sa->exit_signal;
    }
    if (sa->state == sq->state && !sa->state_text.empty()) j.state_text = sa->state_text;
    if (j.nodes.empty()) j.nodes = sa->nodes;
    j.source = "squeue+sacct";
  }
  return j;
}

status_or<std::map<std::string, job_info>> slurm_client::query(const std::vector<std::string>& ids) {
  std::map<std::string, job_info> out;
  if (ids.empty()) return out;
  std::string list = join(ids, ",");
  MAGPIE_ASSIGN_OR_RETURN(run_result q, m_run({"squeue", "--states=all", "--jobs=" + list, "-O", k_squeue_columns}));
  std::map<std::string, job_info> sq, sa;
  if (q.success()) {
    for (auto& j : parse_squeue(q.out)) sq[j.job_id] = j;
  } else if (!contains(q.err, "Invalid job id")) {
    // "Invalid job id" means the controller knows none of them any more; anything else is an outage.
    return error(status_code::unavailable, "squeue failed: %s", why(q).c_str());
  }
  if (m_accounting != 0) {
    auto a = m_run({"sacct", "--parsable2", "-X", "--jobs=" + list, "--format=" + std::string(k_sacct_columns)});
    if (a.ok() && a->success()) {
      if (contains(a->out, "accounting storage is disabled") || contains(a->err, "accounting storage is disabled")) {
        m_accounting = 0;
      } else {
        m_accounting = 1;
        for (auto& j : parse_sacct(a->out)) sa[j.job_id] = j;
      }
    } else if (a.ok() && (contains(a->err, "accounting storage is disabled") || contains(a->err, "not running a supported"))) {
      m_accounting = 0;
    } else {
      MAGPIE_LOG_DEBUG("sacct failed: %s", a.ok() ? why(*a).c_str() : a.get_status().message().c_str());
    }
    if (m_accounting == 0) MAGPIE_LOG_INFO("slurm accounting is disabled: tracking jobs with squeue only");
  }
  for (const auto& id : ids) {
    auto a = sq.find(id);
    auto b = sa.find(id);
    out[id] = merge_job_views(a == sq.end() ? nullptr : &a->second, b == sa.end() ? nullptr : &b->second, id);
  }
  return out;
}

status slurm_client::cancel(const std::vector<std::string>& ids) {
  if (ids.empty()) return ok_status();
  std::vector<std::string> argv = {"scancel"};
  argv.insert(argv.end(), ids.begin(), ids.end());
  MAGPIE_ASSIGN_OR_RETURN(run_result r, m_run(argv));
  if (r.success() || contains(r.err, "already completing or completed") || contains(r.err, "Invalid job id"))
    return ok_status();
  return error(status_code::unavailable, "scancel failed: %s", why(r).c_str());
}

status check_slurm_tools() {
  std::vector<std::string> missing;
  for (const char* t : {"sbatch", "squeue", "scancel"})
    if (find_executable(t).empty()) missing.push_back(t);
  if (missing.empty()) return ok_status();
  return not_found("Slurm client commands not found on PATH: %s (install slurm-client, or run with -e local)",
                   join(missing, ", ").c_str());
}

}  // namespace magpie::sched
