#include "sched/batch.h"

#include <fcntl.h>
#include <unistd.h>

#include <cmath>

#include "core/log.h"
#include "core/strings.h"
#include "core/workspace.h"
#include "sched/engine.h"
#include "sched/ray_client.h"
#include "sched/task_codec.h"

namespace magpie::sched {

using kernel::eval_request;
using kernel::kernel_type;
using kernel::scheduler_options;

json job_record::to_json() const {
  return {{"name", name},     {"role", role},         {"kernels", kernels},         {"after", after},
          {"sbatch_args", sbatch_args}, {"ray_request", ray_request}, {"dir", dir.string()}, {"deferred", deferred},
          {"job_id", job_id}, {"submit_error", submit_error}, {"last", last.to_json()}};
}

job_record job_record::from_json(const json& j) {
  job_record r;
  r.name = json_string(j, "name");
  r.role = json_string(j, "role");
  if (j.contains("kernels") && j["kernels"].is_array())
    for (const auto& k : j["kernels"]) r.kernels.push_back(k.get<int>());
  if (j.contains("after") && j["after"].is_array())
    for (const auto& a : j["after"]) r.after.push_back(a.get<std::string>());
  if (j.contains("sbatch_args") && j["sbatch_args"].is_array())
    for (const auto& a : j["sbatch_args"]) r.sbatch_args.push_back(a.get<std::string>());
  if (j.contains("ray_request")) r.ray_request = j["ray_request"];
  r.deferred = j.value("deferred", false);
  r.dir = json_string(j, "dir");
  r.job_id = json_string(j, "job_id");
  r.submit_error = json_string(j, "submit_error");
  if (j.contains("last") && j["last"].is_object()) {
    const json& l = j["last"];
    r.last.job_id = json_string(l, "job_id");
    r.last.name = json_string(l, "name");
    r.last.state = parse_job_state(json_string(l, "state"));
    if (json_string(l, "state") == "NOT_SUBMITTED") r.last.state = job_state::not_submitted;
    r.last.state_text = json_string(l, "state_text");
    r.last.reason = l.contains("reason") && l["reason"].is_string() ? l["reason"].get<std::string>() : "";
    r.last.nodes = l.contains("nodes") && l["nodes"].is_string() ? l["nodes"].get<std::string>() : "";
    r.last.exit_status = l.contains("exit_code") && l["exit_code"].is_number() ? l["exit_code"].get<int>() : -1;
    r.last.exit_signal = l.contains("exit_signal") && l["exit_signal"].is_number() ? l["exit_signal"].get<int>() : 0;
    r.last.elapsed_s = l.contains("elapsed_s") && l["elapsed_s"].is_number() ? l["elapsed_s"].get<double>() : -1;
    r.last.start = l.contains("start") && l["start"].is_string() ? l["start"].get<std::string>() : "";
    r.last.end = l.contains("end") && l["end"].is_string() ? l["end"].get<std::string>() : "";
    r.last.time_limit = json_string(l, "time_limit");
    r.last.source = json_string(l, "source");
  }
  return r;
}

status batch::save() const {
  json js = json::array();
  for (const auto& j : jobs) js.push_back(j.to_json());
  json b = {{"batch", dir.filename().string()}, {"dir", dir.string()},      {"engine", engine},
            {"engine_config", engine_config},   {"mode", mode},
            {"created", created},               {"run_seed", run_seed},     {"output_dir", output_dir.string()},
            {"submit_host", submit_host},       {"command", command},       {"jobs", js},
            {"collected", collected}};
  return write_json_file(dir / "batch.json", b);
}

status_or<batch> batch::load(const fs::path& dir) {
  MAGPIE_ASSIGN_OR_RETURN(json j, read_json_file(dir / "batch.json"));
  batch b;
  b.dir = absolute_path(dir);
  b.engine = json_string(j, "engine", "slurm");  // batches from before the Ray engine are Slurm's
  if (b.engine != "slurm" && b.engine != "ray")
    return parse_error("%s/batch.json: unknown engine '%s' (slurm, ray)", dir.c_str(), b.engine.c_str());
  if (j.contains("engine_config")) b.engine_config = j["engine_config"];
  b.mode = json_string(j, "mode");
  b.created = json_string(j, "created");
  if (j.contains("run_seed") && j["run_seed"].is_number_unsigned()) b.run_seed = j["run_seed"].get<uint64_t>();
  b.output_dir = json_string(j, "output_dir");
  b.submit_host = json_string(j, "submit_host");
  if (j.contains("command") && j["command"].is_array())
    for (const auto& a : j["command"]) b.command.push_back(a.get<std::string>());
  if (!j.contains("jobs") || !j["jobs"].is_array()) return parse_error("%s/batch.json: no 'jobs' list", dir.c_str());
  for (const auto& r : j["jobs"]) {
    b.jobs.push_back(job_record::from_json(r));
    b.jobs.back().engine = b.engine;
  }
  if (j.contains("collected")) b.collected = j["collected"];
  return b;
}

const job_record* batch::find(const std::string& name) const {
  for (const auto& j : jobs)
    if (j.name == name) return &j;
  return nullptr;
}

job_record* batch::find(const std::string& name) {
  for (auto& j : jobs)
    if (j.name == name) return &j;
  return nullptr;
}

std::vector<std::string> batch::job_ids() const {
  std::vector<std::string> ids;
  for (const auto& j : jobs)
    if (!j.job_id.empty()) ids.push_back(j.job_id);
  return ids;
}

fs::path resolve_shared_dir(const scheduler_options& so, const fs::path& output_dir) {
  return absolute_path(so.shared_dir.empty() ? output_dir / "batches" : fs::path(so.shared_dir));
}

fs::path resolve_magpie_bin(const scheduler_options& so) {
  if (!so.magpie_bin.empty()) return absolute_path(so.magpie_bin);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? executable_dir() / "magpie" : exe;
}

std::string gres_for(const scheduler_options& so, bool needs_gpu) {
  if (!needs_gpu) return "";
  return so.gres.empty() ? "gpu:1" : so.gres;
}

std::vector<std::string> common_sbatch_args(const scheduler_options& so, const std::string& time_limit,
                                            const std::string& gres) {
  std::vector<std::string> a;
  auto opt = [&](const char* flag, const std::string& v) {
    if (!v.empty()) a.push_back(std::string(flag) + "=" + v);
  };
  opt("--partition", so.partition);
  opt("--account", so.account);
  opt("--qos", so.qos);
  opt("--constraint", so.constraint);
  opt("--gres", gres);
  opt("--time", time_limit);
  a.push_back(strprintf("--cpus-per-task=%d", so.cpus_per_task));
  opt("--mem", so.mem);
  a.insert(a.end(), so.sbatch_args.begin(), so.sbatch_args.end());
  return a;
}

namespace {

uint64_t fresh_seed() {
  uint64_t s = 0;
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    if (::read(fd, &s, sizeof s) != static_cast<ssize_t>(sizeof s)) s = 0;
    ::close(fd);
  }
  if (s == 0) s = static_cast<uint64_t>(monotonic_seconds() * 1e9) ^ static_cast<uint64_t>(getpid());
  return s >> 1;  // fits a YAML/JSON signed integer when printed back as --seed
}

std::string host_name() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

// job.sh: environment for a non-interactive run, the site's setup lines, then magpie.
std::string job_script(const scheduler_options& so, const fs::path& magpie, const fs::path& job_dir) {
  std::string s = "#!/bin/bash\n# Generated by magpie (src/sched): one job of a scale-out batch.\n";
  s += "export MAGPIE_NO_PROGRESS=1\n";
  s += "export MAGPIE_NO_STORE=1  # collect registers the workspaces in the submitter's store\n";
  for (const auto& line : so.setup) s += line + "\n";
  s += "exec " + shell_quote(magpie.string()) + " jobs run-task " + shell_quote(job_dir.string()) + "\n";
  return s;
}

// What a job reserves: its time limit (Slurm time syntax) and whether it needs a GPU.
struct job_needs {
  std::string time_limit;
  bool gpu = false;
};

// The POST /api/jobs/ body: job.sh in `cwd` under coreutils `timeout` (Ray has no time limits;
// exit code 124 marks the job TIMEOUT), the entrypoint's resources, runtime_env, metadata.
json ray_request_for(const batch& b, const job_record& j, const scheduler_options& so, const job_needs& n,
                     const fs::path& cwd) {
  std::string run = "/bin/bash " + shell_quote((j.dir / "job.sh").string());
  double secs = parse_slurm_duration(n.time_limit);
  if (std::isfinite(secs) && secs > 0) run = strprintf("timeout --kill-after=30 %.0f ", std::ceil(secs)) + run;
  json req = {{"entrypoint", "cd " + shell_quote(cwd.string()) + " && exec " + run}};
  req["entrypoint_num_cpus"] = so.ray.entrypoint_num_cpus >= 0 ? so.ray.entrypoint_num_cpus : double(so.cpus_per_task);
  req["entrypoint_num_gpus"] = n.gpu ? (so.ray.entrypoint_num_gpus >= 0 ? so.ray.entrypoint_num_gpus : 1.0) : 0.0;
  json rt = so.ray.runtime_env.is_object() ? so.ray.runtime_env : json::object();
  for (const auto& [k, v] : so.ray.env_vars) rt["env_vars"][k] = v;
  if (!rt.empty()) req["runtime_env"] = rt;
  json md = {{"magpie_batch", b.dir.filename().string()}, {"magpie_job", j.name}};
  for (const auto& [k, v] : so.ray.metadata) md[k] = v;
  req["metadata"] = md;
  return req;
}

status write_job(batch& b, job_record j, const scheduler_options& so, const fs::path& magpie, const fs::path& chdir,
                 const job_needs& n) {
  j.dir = b.dir / "jobs" / j.name;
  j.engine = b.engine;
  MAGPIE_RETURN_IF_ERROR(make_dirs(j.dir));
  if (b.engine == "ray") {
    j.ray_request = ray_request_for(b, j, so, n, chdir.empty() ? j.dir : chdir);
  } else {
    j.sbatch_args = {"--job-name=magpie-" + j.name, "--output=" + (j.dir / "slurm-%j.out").string(),
                     "--chdir=" + (chdir.empty() ? j.dir : chdir).string(), "--kill-on-invalid-dep=yes"};
    auto common = common_sbatch_args(so, n.time_limit, gres_for(so, n.gpu));
    j.sbatch_args.insert(j.sbatch_args.end(), common.begin(), common.end());
  }
  json task = {{"batch_dir", b.dir.string()}, {"name", j.name}, {"role", j.role}, {"kernels", j.kernels}};
  MAGPIE_RETURN_IF_ERROR(write_json_file(j.dir / "task.json", task));
  MAGPIE_RETURN_IF_ERROR(write_file_atomic(j.dir / "job.sh", job_script(so, magpie, j.dir)));
  fs::permissions(j.dir / "job.sh", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec,
                  fs::perm_options::replace);
  j.last.state = job_state::not_submitted;
  b.jobs.push_back(std::move(j));
  return ok_status();
}

status_or<batch> new_batch(const std::string& mode, const std::string& label, const scheduler_options& so,
                           const fs::path& output_dir) {
  if (!so.time_limit.empty() && !valid_time_limit(so.time_limit))
    return invalid_argument("scheduler.time_limit '%s' is not a Slurm time (M, M:S, H:M:S, D-H:M:S)", so.time_limit.c_str());
  if (!so.timing_time_limit.empty() && !valid_time_limit(so.timing_time_limit))
    return invalid_argument("scheduler.timing_time_limit '%s' is not a Slurm time", so.timing_time_limit.c_str());
  batch b;
  MAGPIE_RETURN_IF_ERROR(engine_for(so, &b.engine, &b.engine_config));
  fs::path shared = resolve_shared_dir(so, output_dir);
  MAGPIE_ASSIGN_OR_RETURN(workspace ws, create_workspace(shared, "batch_" + mode, label));
  b.dir = ws.dir;
  b.mode = mode;
  b.created = iso_time_now();
  b.output_dir = absolute_path(output_dir);
  b.submit_host = host_name();
  return b;
}

bool is_gpu(kernel_type t) { return t != kernel_type::host; }

}  // namespace

status_or<batch> plan_kernel_batch(const eval_request& req_in) {
  eval_request req = req_in;
  const scheduler_options& so = req.scheduler;
  const bool compare = req.mode == "compare";
  int n = static_cast<int>(req.kernels.size());
  if (n == 0) return invalid_argument("no kernels to %s", req.mode.c_str());
  if (compare && n < 2) return invalid_argument("compare needs at least 2 kernels, got %d", n);
  if (compare && (req.baseline_index < 0 || req.baseline_index >= n))
    return invalid_argument("--baseline %d is out of range (0..%d)", req.baseline_index, n - 1);
  if (!req.correctness.seed) req.correctness.seed = fresh_seed();
  MAGPIE_ASSIGN_OR_RETURN(batch b, new_batch(req.mode, compare ? "" : req.kernels[0].id, so, req.output_dir));
  b.run_seed = *req.correctness.seed;
  req.scheduler.environment = "local";  // what each job does on its node
  MAGPIE_RETURN_IF_ERROR(write_json_file(b.dir / "request.json", request_to_json(req)));
  fs::path magpie = resolve_magpie_bin(so);
  const bool ref_job = compare || req.reference.has_value();
  const bool baseline_is_ref = compare && !req.reference;
  if (ref_job) {
    const auto& spec = req.reference ? *req.reference : req.kernels[static_cast<size_t>(req.baseline_index)];
    job_record r{"reference", "reference"};
    MAGPIE_RETURN_IF_ERROR(write_job(b, r, so, magpie, {}, {so.time_limit, is_gpu(spec.type)}));
  }
  std::vector<std::string> kernel_jobs;
  for (int i = 0; i < n; ++i) {
    if (baseline_is_ref && i == req.baseline_index) continue;  // the reference job evaluates it
    const auto& spec = req.kernels[static_cast<size_t>(i)];
    job_record k{strprintf("k%02d_%s", i, sanitize_label(spec.id).c_str()), "kernel"};
    k.kernels = {i};
    if (ref_job) k.after = {"reference"};
    kernel_jobs.push_back(k.name);
    MAGPIE_RETURN_IF_ERROR(write_job(b, k, so, magpie, {}, {so.time_limit, is_gpu(spec.type)}));
  }
  if (compare && req.performance.enabled) {
    bool gpu = false;
    for (const auto& k : req.kernels) gpu = gpu || is_gpu(k.type);
    job_record t{"timing", "timing"};
    t.after = kernel_jobs;
    t.after.push_back("reference");
    const std::string& tl = so.timing_time_limit.empty() ? so.time_limit : so.timing_time_limit;
    MAGPIE_RETURN_IF_ERROR(write_job(b, t, so, magpie, {}, {tl, gpu}));
  }
  MAGPIE_RETURN_IF_ERROR(b.save());
  return b;
}

status_or<batch> plan_command_batch(const std::vector<std::string>& args, const scheduler_options& so,
                                    const fs::path& output_dir, bool needs_gpu) {
  if (args.empty()) return invalid_argument("no magpie command to submit (give it after --)");
  MAGPIE_ASSIGN_OR_RETURN(batch b, new_batch("command", sanitize_label(args[0]), so, output_dir));
  b.command = args;
  job_record c{"command", "command"};
  MAGPIE_RETURN_IF_ERROR(write_job(b, c, so, resolve_magpie_bin(so), fs::current_path(), {so.time_limit, needs_gpu}));
  MAGPIE_RETURN_IF_ERROR(b.save());
  return b;
}

status engine_for(const scheduler_options& so, std::string* name, json* config) {
  if (so.environment != "ray") {
    *name = "slurm";
    *config = nullptr;
    return ok_status();
  }
  MAGPIE_ASSIGN_OR_RETURN(net::endpoint_url url, resolve_ray_address(so.ray.cluster_address));
  *name = "ray";
  *config = {{"address", url.to_string()}};
  return ok_status();
}

namespace {

bool deps_settled(const batch& b, const job_record& j) {
  for (const auto& name : j.after)
    if (const job_record* d = b.find(name); d && !job_settled(*d)) return false;
  return true;
}

// Submits one job; on success records its id and pending state.
status submit_one(batch& b, job_record& j, engine& e) {
  std::vector<std::string> deps;
  if (e.native_dependencies())
    for (const auto& name : j.after)
      if (const job_record* d = b.find(name); d && !d->job_id.empty()) deps.push_back(d->job_id);
  auto id = e.submit(b, j, deps);
  if (!id.ok()) return id.get_status();
  j.job_id = *id;
  j.deferred = false;
  j.last.job_id = *id;
  j.last.state = job_state::pending;
  j.last.source = e.name();
  MAGPIE_LOG_INFO("submitted %s: %s job %s%s", j.name.c_str(), e.name(), id->c_str(),
                  deps.empty() ? "" : (" (after " + join(deps, ",") + ")").c_str());
  return ok_status();
}

}  // namespace

status submit_batch(batch& b, engine& e) {
  for (auto& j : b.jobs) {
    if (!j.job_id.empty()) continue;
    if (!e.native_dependencies() && !j.after.empty()) {
      j.deferred = true;  // submitted by the tracking magpie once its `after` jobs have ended
      continue;
    }
    if (auto st = submit_one(b, j, e); !st.ok()) {
      j.submit_error = st.message();
      for (auto& d : b.jobs)
        if (d.deferred) {
          d.deferred = false;
          d.submit_error = "the submission of job '" + j.name + "' failed first";
        }
      (void)b.save();
      std::vector<std::string> done = b.job_ids();
      if (!done.empty()) {
        MAGPIE_LOG_WARN("submission of job '%s' failed: cancelling the %zu job(s) already submitted", j.name.c_str(),
                        done.size());
        if (auto c = e.cancel(done); !c.ok()) MAGPIE_LOG_WARN("%s", c.message().c_str());
      }
      return st.with_context("job '" + j.name + "'");
    }
    MAGPIE_RETURN_IF_ERROR(b.save());
  }
  return b.save();
}

status_or<std::vector<std::string>> submit_ready(batch& b, engine& e) {
  std::vector<std::string> done;
  for (auto& j : b.jobs) {
    if (!j.deferred || !j.job_id.empty() || !deps_settled(b, j)) continue;
    if (auto st = submit_one(b, j, e); !st.ok()) {
      if (st.code() == status_code::unavailable || st.code() == status_code::timeout) return st;  // retried next round
      j.deferred = false;
      j.submit_error = st.message();
      MAGPIE_LOG_WARN("job '%s' could not be submitted: %s", j.name.c_str(), st.message().c_str());
    }
    done.push_back(j.name);
  }
  if (!done.empty()) MAGPIE_RETURN_IF_ERROR(b.save());
  return done;
}

status_or<eval_request> load_batch_request(const batch& b) {
  MAGPIE_ASSIGN_OR_RETURN(json j, read_json_file(b.dir / "request.json"));
  return request_from_json(j);
}

}  // namespace magpie::sched
