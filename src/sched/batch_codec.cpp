// batch.json ↔ batch / job_record. A job writes nothing here, but the file outlives magpie
// versions and is edited by hand at times: every field is type-checked and an error names
// <batch>/batch.json and the field (jobs[i].last.exit_code, ...), never an exception.
#include "sched/batch.h"

#include "core/enum_names.h"
#include "core/strings.h"
#include "sched/batch_codec.h"
#include "sched/slurm_codec.h"

namespace magpie::sched {

json job_record_json(const job_record& r) {
  return {{"name", r.name},     {"role", r.role},         {"kernels", r.kernels},         {"after", r.after},
          {"sbatch_args", r.sbatch_args}, {"ray_request", r.ray_request}, {"dir", r.dir.string()}, {"deferred", r.deferred},
          {"job_id", r.job_id}, {"submit_error", r.submit_error}, {"last", job_info_json(r.last)}};
}

namespace {

/// A required word of `f` that `parse` maps to an enum; an unknown word names the field and the
/// words it may be (`expected`).
template <typename E>
status require_word(const json_fields& f, const char* key, std::optional<E> (*parse)(std::string_view),
                    const char* expected, E* out) {
  std::string word;
  MAGPIE_RETURN_IF_ERROR(f.require(key, &word));
  std::optional<E> v = parse(word);
  if (!v) return parse_error("%s: expected %s, got '%s'", f.field(key).c_str(), expected, word.c_str());
  *out = *v;
  return ok_status();
}

status read_last(const json_fields& l, job_info* out) {
  MAGPIE_RETURN_IF_ERROR(l.check_object());
  std::string state;
  for (auto [key, dst] : {std::pair{"job_id", &out->job_id}, {"name", &out->name}, {"state", &state},
                          {"state_text", &out->state_text}, {"reason", &out->reason}, {"nodes", &out->nodes},
                          {"start", &out->start}, {"end", &out->end}, {"time_limit", &out->time_limit},
                          {"source", &out->source}})
    MAGPIE_RETURN_IF_ERROR(l.read(key, dst));
  out->state = state == job_state_name(job_state::not_submitted) ? job_state::not_submitted : parse_job_state(state);
  MAGPIE_RETURN_IF_ERROR(l.read("exit_code", &out->exit_status));
  MAGPIE_RETURN_IF_ERROR(l.read("exit_signal", &out->exit_signal));
  return l.read("elapsed_s", &out->elapsed_s);
}

}  // namespace

status_or<job_record> job_record::from_json(const json_fields& f) {
  MAGPIE_RETURN_IF_ERROR(f.check_object());
  job_record r;
  MAGPIE_RETURN_IF_ERROR(f.require("name", &r.name));
  MAGPIE_RETURN_IF_ERROR(require_word(f, "role", parse_job_role, "reference, kernel, timing or command", &r.role));
  MAGPIE_RETURN_IF_ERROR(f.read("kernels", &r.kernels));
  MAGPIE_RETURN_IF_ERROR(f.read("after", &r.after));
  MAGPIE_RETURN_IF_ERROR(f.read("sbatch_args", &r.sbatch_args));
  MAGPIE_RETURN_IF_ERROR(f.read("ray_request", &r.ray_request));
  MAGPIE_RETURN_IF_ERROR(f.read("deferred", &r.deferred));
  MAGPIE_RETURN_IF_ERROR(f.read("dir", &r.dir));
  MAGPIE_RETURN_IF_ERROR(f.read("job_id", &r.job_id));
  MAGPIE_RETURN_IF_ERROR(f.read("submit_error", &r.submit_error));
  if (json_member(f.doc(), "last")) MAGPIE_RETURN_IF_ERROR(read_last(f.child("last"), &r.last));
  return r;
}

namespace {
constexpr std::pair<batch_mode, const char*> k_batch_mode_names[] = {
    {batch_mode::analyze, "analyze"}, {batch_mode::compare, "compare"}, {batch_mode::command, "command"}};
constexpr std::pair<job_role, const char*> k_role_names[] = {
    {job_role::reference, "reference"}, {job_role::kernel, "kernel"}, {job_role::timing, "timing"}, {job_role::command, "command"}};
}  // namespace

constexpr std::pair<run_environment, const char*> k_environment_names[] = {
    {run_environment::local, "local"}, {run_environment::container, "container"}, {run_environment::ray, "ray"},
    {run_environment::slurm, "slurm"}};
constexpr std::pair<engine_kind, const char*> k_engine_names[] = {{engine_kind::slurm, "slurm"}, {engine_kind::ray, "ray"}};

const char* run_environment_name(run_environment e) { return enum_name(k_environment_names, e, "local"); }
std::optional<run_environment> parse_run_environment(std::string_view word) { return enum_parse(k_environment_names, word); }
const char* engine_kind_name(engine_kind k) { return enum_name(k_engine_names, k, "slurm"); }
std::optional<engine_kind> parse_engine_kind(std::string_view word) { return enum_parse(k_engine_names, word); }

const char* job_role_name(job_role r) { return enum_name(k_role_names, r, "kernel"); }
std::optional<job_role> parse_job_role(std::string_view word) { return enum_parse(k_role_names, word); }

const char* batch_mode_name(batch_mode m) { return enum_name(k_batch_mode_names, m, "analyze"); }
std::optional<batch_mode> parse_batch_mode(std::string_view word) { return enum_parse(k_batch_mode_names, word); }
std::optional<batch_mode> batch_mode_of(kernel::run_mode m) {
  if (m == kernel::run_mode::analyze) return batch_mode::analyze;
  if (m == kernel::run_mode::compare) return batch_mode::compare;
  return std::nullopt;
}

status batch::save() const {
  json js = json::array();
  for (const auto& j : jobs) js.push_back(job_record_json(j));
  json b = {{"batch", dir.filename().string()},
            {"dir", dir.string()},
            {"engine", engine},
            {"engine_config", ray_address.empty() ? json(nullptr) : json{{"address", ray_address}}},
            {"mode", mode},
            {"created", created},
            {"token", token},
            {"run_seed", run_seed},
            {"output_dir", output_dir.string()},
            {"submit_host", submit_host},
            {"command", command},
            {"jobs", js},
            {"collected", collected}};
  return write_json_file(dir / "batch.json", b);
}

status_or<batch> batch::load(const fs::path& dir) {
  const fs::path file = dir / "batch.json";
  MAGPIE_ASSIGN_OR_RETURN(json j, read_json_file(file));
  json_fields f(j, file.string());
  MAGPIE_RETURN_IF_ERROR(f.check_object());
  batch b;
  b.dir = absolute_path(dir);
  std::string engine = engine_kind_name(engine_kind::slurm);
  MAGPIE_RETURN_IF_ERROR(f.read("engine", &engine));  // batches from before the Ray engine are Slurm's
  std::optional<engine_kind> kind = parse_engine_kind(engine);
  if (!kind) return parse_error("%s: unknown engine '%s' (slurm, ray)", file.c_str(), engine.c_str());
  b.engine = *kind;
  json engine_config = nullptr;  // ray: {"address": dashboard URL}
  MAGPIE_RETURN_IF_ERROR(f.read("engine_config", &engine_config));
  if (engine_config.is_object()) b.ray_address = json_string(engine_config, "address");
  MAGPIE_RETURN_IF_ERROR(require_word(f, "mode", parse_batch_mode, "analyze, compare or command", &b.mode));
  MAGPIE_RETURN_IF_ERROR(f.read("created", &b.created));
  MAGPIE_RETURN_IF_ERROR(f.read("token", &b.token));  // absent in batches from before it existed
  MAGPIE_RETURN_IF_ERROR(f.read("run_seed", &b.run_seed));
  MAGPIE_RETURN_IF_ERROR(f.read("output_dir", &b.output_dir));
  MAGPIE_RETURN_IF_ERROR(f.read("submit_host", &b.submit_host));
  MAGPIE_RETURN_IF_ERROR(f.read("command", &b.command));
  const json* jobs = json_member(j, "jobs");
  if (!jobs || !jobs->is_array()) return parse_error("%s: no 'jobs' list", file.c_str());
  for (size_t i = 0; i < jobs->size(); ++i) {
    json_fields jf((*jobs)[i], file.string(), strprintf("jobs[%zu]", i));
    MAGPIE_ASSIGN_OR_RETURN(job_record r, job_record::from_json(jf));
    r.engine = b.engine;
    b.jobs.push_back(std::move(r));
  }
  MAGPIE_RETURN_IF_ERROR(f.read("collected", &b.collected));
  return b;
}

json batch_options_json(const batch& b) {
  auto j = read_json_file(b.dir / "request.json");
  if (!j.ok() || !j->is_object() || !j->contains("scheduler")) return nullptr;
  return (*j)["scheduler"];
}

}  // namespace magpie::sched
