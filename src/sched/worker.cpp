#include "sched/worker.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "core/log.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "kernel/evaluate.h"
#include "magpie_generated/version.h"
#include "sched/job_results.h"

namespace magpie::sched {

using kernel::eval_request;
using kernel::run_outcome;

namespace {

// The Slurm node name when run by slurmd (it may differ from the host name), else the host name.
std::string host_name() {
  if (const char* n = std::getenv("SLURMD_NODENAME"); n && *n) return n;
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

// A Ray job's entrypoint sees its submission id only inside the job config Ray exports.
std::string ray_submission_id() {
  const char* cfg = std::getenv("RAY_JOB_CONFIG_JSON_ENV_VAR");
  if (!cfg || !*cfg) return "";
  auto j = parse_json(cfg, "RAY_JOB_CONFIG_JSON_ENV_VAR");
  if (!j.ok() || !j->contains("metadata") || !(*j)["metadata"].is_object()) return "";
  return json_string((*j)["metadata"], "job_submission_id");
}

// Compare batches gate on the reference's manifest; a reference judged by its exit code only
// (no manifest) gates nothing, exactly as a local compare then checks exit codes.
std::optional<kernel::external_reference> gate_for(const batch& b) {
  auto ext = reference_from_job(b);
  if (ext && b.mode == batch_mode::compare && ext->failure.empty() && ext->manifest_dir.empty() &&
      ext->basis == correctness_basis::exit_code)
    return std::nullopt;
  return ext;
}

status_or<run_outcome> run_kernel_job(const batch& b, eval_request req, int index, const fs::path& dir) {
  if (index < 0 || static_cast<size_t>(index) >= req.kernels.size())
    return invalid_argument("task kernel index %d is out of range", index);
  eval_request sub = req;
  sub.mode = kernel::run_mode::analyze;
  sub.kernels = {req.kernels[static_cast<size_t>(index)]};
  sub.baseline_index = 0;
  sub.output_dir = dir;
  sub.external_ref = gate_for(b);
  if (b.mode == batch_mode::compare) {
    sub.performance.enabled = false;  // the timing job times the correct kernels together
    sub.reference.reset();
  }
  return kernel::run_analyze(sub);
}

// compare: the baseline and every candidate that passed, re-checked and timed together.
status_or<run_outcome> run_timing_job(const batch& b, const eval_request& req, const fs::path& dir, json* result) {
  auto rows = correctness_rows(b, req);
  const int base = req.baseline_index;
  if (!rows[static_cast<size_t>(base)].correct()) {
    (*result)["skipped"] = "the baseline is not correct: there is nothing to time against (a local compare ranks "
                           "nothing in this case either)";
    return error(status_code::cancelled, "skipped");
  }
  std::vector<int> order = {base};
  for (const auto& r : rows)
    if (r.index != base && r.correct()) order.push_back(r.index);
  (*result)["timed_indices"] = order;
  eval_request sub = req;
  sub.kernels.clear();
  for (int i : order) sub.kernels.push_back(req.kernels[static_cast<size_t>(i)]);
  sub.baseline_index = 0;
  sub.output_dir = dir;
  sub.external_ref = gate_for(b);
  if (sub.external_ref) sub.reference.reset();
  MAGPIE_LOG_INFO("timing %zu kernel(s) together on %s", order.size(), host_name().c_str());
  if (order.size() == 1) {
    sub.mode = kernel::run_mode::analyze;
    return kernel::run_analyze(sub);
  }
  sub.mode = kernel::run_mode::compare;
  return kernel::run_compare(sub);
}

// command: `magpie <args>` with -o <job>/results unless the command names its own.
status_or<run_outcome> run_command_job(const batch& b, const fs::path& dir) {
  std::vector<std::string> argv = {resolve_magpie_bin({})};
  bool has_out = false;
  for (const auto& a : b.command) has_out = has_out || a == "-o" || a == "--output-dir" || starts_with(a, "--output-dir=");
  // global flags stop at the subcommand, so -o goes after the subcommand's arguments
  argv.insert(argv.end(), b.command.begin(), b.command.end());
  if (!has_out) argv.insert(argv.end(), {"-o", (dir / "results").string()});
  spawn_spec sp;
  sp.argv = argv;
  sp.forward_output = true;
  sp.unset_env = {"MAGPIE_NO_PROGRESS"};
  MAGPIE_LOG_INFO("running %s", argv_to_display(argv).c_str());
  MAGPIE_ASSIGN_OR_RETURN(run_result r, run_command(sp, 0));
  run_outcome out;
  out.exit_code = r.exit_code >= 0 ? r.exit_code : 128 + r.term_signal;
  out.workspace = has_out ? fs::path() : dir / "results";
  return out;
}

// kernel: task.json names exactly one request kernel.
status_or<run_outcome> kernel_job(const batch& b, const eval_request& req, const json& task, const fs::path& dir) {
  std::vector<int> kernels;
  MAGPIE_RETURN_IF_ERROR(json_fields(task, (dir / "task.json").string()).require("kernels", &kernels));
  if (kernels.size() != 1) return invalid_argument("%s/task.json: a kernel job evaluates exactly one kernel", dir.c_str());
  return run_kernel_job(b, req, kernels[0], dir);
}

}  // namespace

int run_task(const fs::path& job_dir_in) {
  fs::path dir = absolute_path(job_dir_in);
  json result = {{"slurm_job_id", std::getenv("SLURM_JOB_ID") ? std::getenv("SLURM_JOB_ID") : ""},
                 {"ray_submission_id", ray_submission_id()},
                 {"node", host_name()},
                 {"started", iso_time_now()},
                 {"magpie_version", std::string(MAGPIE_VERSION "+" MAGPIE_GIT_COMMIT)},
                 {"exit_code", 2},
                 {"error", nullptr},
                 {"workspace", nullptr},
                 {"report_file", nullptr}};
  auto finish = [&](int code, const std::string& err) {
    result["exit_code"] = code;
    if (!err.empty()) result["error"] = err;
    result["finished"] = iso_time_now();
    if (auto st = write_json_file(dir / "result.json", result); !st.ok())
      std::fprintf(stderr, "magpie jobs run-task: %s\n", st.message().c_str());
    if (!err.empty()) std::fprintf(stderr, "magpie jobs run-task: %s\n", err.c_str());
    return code;
  };
  auto task = read_json_file(dir / "task.json");
  if (!task.ok()) return finish(2, task.get_status().message());
  result["name"] = json_string(*task, "name");
  std::string word = json_string(*task, "role");
  result["role"] = word;
  auto role = parse_job_role(word);
  if (!role) return finish(2, (dir / "task.json").string() + ": unknown role '" + word + "'");
  auto b = batch::load(json_string(*task, "batch_dir"));
  if (!b.ok()) return finish(2, b.get_status().message());
  status_or<run_outcome> out = error(status_code::internal, "unknown role '%s'", word.c_str());
  if (*role == job_role::command) {
    out = run_command_job(*b, dir);
  } else {
    auto req = load_batch_request(*b);
    if (!req.ok()) return finish(2, req.get_status().message());
    req->output_dir = dir;
    if (*role == job_role::reference) out = kernel::run_reference_only(*req);
    else if (*role == job_role::kernel) out = kernel_job(*b, *req, *task, dir);
    else out = run_timing_job(*b, *req, dir, &result);
  }
  if (!out.ok()) {
    if (result.contains("skipped")) return finish(0, "");
    return finish(1, out.get_status().message());
  }
  if (!out->workspace.empty()) result["workspace"] = out->workspace.string();
  if (!out->report_path.empty()) result["report_file"] = out->report_path.string();
  std::fputs(out->console.c_str(), stdout);
  std::fflush(stdout);
  return finish(out->exit_code, "");
}

}  // namespace magpie::sched
