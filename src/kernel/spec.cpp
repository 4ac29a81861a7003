#include "kernel/spec.h"

#include <tuple>

#include "core/enum_names.h"
#include "core/log.h"
#include "core/strings.h"
#include "core/yaml_json.h"
#include "kernel/spec_paths.h"

namespace magpie::kernel {

bool parse_kernel_type(const std::string& s, kernel_type* out) {
  std::string t = to_lower(std::string(trim(s)));
  if (t == "hip") *out = kernel_type::hip;
  else if (t == "cuda") *out = kernel_type::cuda;
  else if (t == "pytorch" || t == "torch" || t == "py") *out = kernel_type::pytorch;
  else if (t == "triton") *out = kernel_type::triton;
  else if (t == "host" || t == "cpu" || t == "cpp") *out = kernel_type::host;
  else return false;
  return true;
}

const char* kernel_type_name(kernel_type t) {
  switch (t) {
    case kernel_type::hip: return "HIP";
    case kernel_type::cuda: return "CUDA";
    case kernel_type::pytorch: return "PYTORCH";
    case kernel_type::triton: return "TRITON";
    case kernel_type::host: return "HOST";
  }
  return "UNKNOWN";
}

namespace {
constexpr std::pair<correctness_method, const char*> k_method_names[] = {
    {correctness_method::auto_select, "auto"},
    {correctness_method::outputs, "outputs"},
    {correctness_method::exit_code, "exit_code"},
    {correctness_method::exit_code, "testcase"}};  // Magpie's word; written as exit_code
constexpr std::pair<profiler_backend, const char*> k_backend_names[] = {
    {profiler_backend::auto_select, "auto"}, {profiler_backend::ncu, "ncu"},
    {profiler_backend::rocprof_compute, "rocprof_compute"}, {profiler_backend::metrix, "metrix"},
    {profiler_backend::cupti, "cupti"}, {profiler_backend::none, "none"}};
constexpr std::pair<run_mode, const char*> k_mode_names[] = {
    {run_mode::analyze, "analyze"}, {run_mode::compare, "compare"}, {run_mode::reference, "reference"}};
}  // namespace

const char* correctness_method_name(correctness_method m) { return enum_name(k_method_names, m, "auto"); }
std::optional<correctness_method> parse_correctness_method(std::string_view word) {
  return enum_parse(k_method_names, word);
}
const char* profiler_backend_name(profiler_backend b) { return enum_name(k_backend_names, b, "auto"); }
std::optional<profiler_backend> parse_profiler_backend(std::string_view word) { return enum_parse(k_backend_names, word); }
const char* run_mode_name(run_mode m) { return enum_name(k_mode_names, m, "analyze"); }
std::optional<run_mode> parse_run_mode(std::string_view word) { return enum_parse(k_mode_names, word); }

bool uses_cuda(kernel_type t) { return t == kernel_type::cuda || is_python(t); }
bool is_python(kernel_type t) { return t == kernel_type::pytorch || t == kernel_type::triton; }


namespace {

status parse_bench_target(const config_node& n, const std::string& field, bench_target* out) {
  field_reader r(n, field);
  MAGPIE_RETURN_IF_ERROR(r.read_string("module", &out->module));
  MAGPIE_RETURN_IF_ERROR(r.read_string("callable", &out->callable));
  out->get_inputs = "get_inputs";
  MAGPIE_RETURN_IF_ERROR(r.read_string("get_inputs", &out->get_inputs));
  return r.check_unknown();
}

status parse_entry(const config_node& n, const std::string& field, const path_context& paths, kernel_spec* k) {
  if (!n.is_map()) return config_error(n, field, "expected a mapping (a kernel entry)");
  field_reader r(n, field);
  MAGPIE_RETURN_IF_ERROR(r.read_string("id", &k->id));
  std::string type;
  MAGPIE_RETURN_IF_ERROR(r.read_string("type", &type));
  if (!type.empty() && !parse_kernel_type(type, &k->type)) {
    const config_node* t = n.get("type");
    return config_error(t ? *t : n, r.field("type"),
                        "unsupported kernel type '" + type + "' (hip, cuda, pytorch|torch|py, triton, host)");
  }
  std::string wd;
  MAGPIE_RETURN_IF_ERROR(r.read_string("working_dir", &wd));
  MAGPIE_RETURN_IF_ERROR(r.read_string_list("source_files", &k->source_files));
  MAGPIE_RETURN_IF_ERROR(resolve_working_dir(wd, r.get("working_dir"), r.field("working_dir"), k->source_files, paths,
                                             &k->working_dir));
  for (auto& s : k->source_files) s = resolve_entry_file(s, k->working_dir, paths, n.where() + ": " + r.field("source_files"));
  if (type.empty()) {
    k->type = kernel_type::hip;  // Magpie's default, unless the first source file says otherwise
    if (!k->source_files.empty() && infer_kernel_type(k->source_files[0], &k->type) && k->type != kernel_type::hip)
      MAGPIE_LOG_INFO("%s: %s not set: %s inferred from %s", n.where().c_str(), r.field("type").c_str(),
                      to_lower(kernel_type_name(k->type)).c_str(), fs::path(k->source_files[0]).filename().c_str());
  }
  std::string expect;
  MAGPIE_RETURN_IF_ERROR(r.read_string("expect", &expect));
  // `expect`: the words of kernel_spec::expect_incorrect (absent = correct).
  static constexpr std::pair<bool, const char*> k_expect_words[] = {{false, "correct"}, {true, "incorrect"}};
  if (!expect.empty()) {
    const std::optional<bool> wrong_on_purpose = enum_parse(k_expect_words, expect);
    if (!wrong_on_purpose)
      return config_error(*r.get("expect"), r.field("expect"), "expected 'correct' or 'incorrect', got '" + expect + "'");
    k->expect_incorrect = *wrong_on_purpose;
  }
  MAGPIE_RETURN_IF_ERROR(r.read_string_map("env", &k->env));
  MAGPIE_RETURN_IF_ERROR(r.read_command("compile_command", &k->compile_command));
  MAGPIE_RETURN_IF_ERROR(r.read_command("testcase_command", &k->testcase_command));
  MAGPIE_RETURN_IF_ERROR(r.read_command("prof_command", &k->prof_command));
  for (auto [key, cmds] : {std::pair<const char*, const argv_list*>{"compile_command", &k->compile_command},
                            {"testcase_command", &k->testcase_command}, {"prof_command", &k->prof_command}})
    warn_relative_programs(*cmds, k->working_dir, paths, n.where() + ": " + r.field(key));
  if (const config_node* bt = r.get("bench_target")) {
    bench_target t;
    MAGPIE_RETURN_IF_ERROR(parse_bench_target(*bt, r.field("bench_target"), &t));
    k->target = t;
  }
  MAGPIE_RETURN_IF_ERROR(r.read_string("get_inputs_func", &k->get_inputs_func));
  MAGPIE_RETURN_IF_ERROR(r.read_string("get_init_inputs_func", &k->get_init_inputs_func));
  MAGPIE_RETURN_IF_ERROR(r.read_string("entry", &k->entry));
  MAGPIE_RETURN_IF_ERROR(r.read_string("inputs_from", &k->inputs_from));
  if (!k->inputs_from.empty())
    k->inputs_from = resolve_entry_file(k->inputs_from, k->working_dir, paths, n.where() + ": " + r.field("inputs_from"));
  k->origin = n.where();
  return r.check_unknown();
}

status parse_tolerances(const config_node& n, const std::string& field, correctness_policy* c) {
  if (!n.is_map()) return config_error(n, field, "expected dtype: {atol: .., rtol: ..} entries");
  for (const auto& [name, v] : n.entries) {
    tolerance* t = nullptr;
    std::string d = to_lower(name);
    if (d == "float32" || d == "fp32") t = &c->fp32;
    else if (d == "float16" || d == "fp16") t = &c->fp16;
    else if (d == "bfloat16" || d == "bf16") t = &c->bf16;
    else if (d == "float64" || d == "fp64") t = &c->fp64;
    else return config_error(v, field + "." + name, "unknown dtype (float32, float16, bfloat16, float64)");
    field_reader r(v, field + "." + name);
    MAGPIE_RETURN_IF_ERROR(r.read_double("atol", &t->atol));
    MAGPIE_RETURN_IF_ERROR(r.read_double("rtol", &t->rtol));
    MAGPIE_RETURN_IF_ERROR(r.check_unknown());
  }
  return ok_status();
}

status parse_correctness(const config_node& n, correctness_policy* c) {
  field_reader r(n, "correctness");
  std::string method = "auto";
  MAGPIE_RETURN_IF_ERROR(r.read_string("method", &method));
  auto m = parse_correctness_method(method);
  if (!m) return config_error(*n.get("method"), "correctness.method", "expected auto, outputs or exit_code");
  c->method = *m;
  std::string backend;
  MAGPIE_RETURN_IF_ERROR(r.read_string("backend", &backend));
  if (!backend.empty() && backend != "testcase" && backend != "accordo")
    return config_error(*n.get("backend"), "correctness.backend", "expected testcase or accordo, got '" + backend + "'");
  double acc_atol = -1, acc_rtol = -1;
  if (const config_node* acc = r.get("accordo")) {
    field_reader ar(*acc, "correctness.accordo");
    bool equal_nan = false;
    double timeout = 0;
    MAGPIE_RETURN_IF_ERROR(ar.read_double("atol", &acc_atol));
    MAGPIE_RETURN_IF_ERROR(ar.read_double("rtol", &acc_rtol));
    MAGPIE_RETURN_IF_ERROR(ar.read_bool("equal_nan", &equal_nan));
    MAGPIE_RETURN_IF_ERROR(ar.read_double("timeout_seconds", &timeout));
    if ((ar.get("atol") && !(acc_atol >= 0)) || (ar.get("rtol") && !(acc_rtol >= 0)))
      return config_error(*acc, "correctness.accordo", "atol and rtol must be >= 0");
    if (ar.get("timeout_seconds") && !(timeout > 0))
      return config_error(*ar.get("timeout_seconds"), "correctness.accordo.timeout_seconds", "expected seconds > 0");
    if (backend == "accordo" && ar.get("timeout_seconds")) c->timeout_s = timeout;
    for (const char* k : {"kernel_name", "reference_binary", "optimized_binary", "kernel_args", "working_directory", "tolerance"})
      ar.allow(k);
    MAGPIE_RETURN_IF_ERROR(ar.check_unknown());
  }
  if (backend == "accordo")
    MAGPIE_LOG_WARN("%s: correctness.backend accordo (IntelliKit, AMD) is not provided: magpie compares the outputs "
                    "with the reference when the harness writes them (accordo atol/rtol used as tolerances), else the "
                    "testcase exit code decides", n.where().c_str());
  int64_t trials = c->trials;
  MAGPIE_RETURN_IF_ERROR(r.read_int("trials", &trials));
  if (trials < 1 || trials > 1000) return config_error(*n.get("trials"), "correctness.trials", "expected 1..1000");
  c->trials = static_cast<int>(trials);
  if (const config_node* s = r.get("seed")) {
    auto v = parse_int(s->text);
    if (!v || *v < 0) return config_error(*s, "correctness.seed", "expected a non-negative integer");
    c->seed = static_cast<uint64_t>(*v);
  }
  double atol = -1, rtol = -1;
  MAGPIE_RETURN_IF_ERROR(r.read_double("atol", &atol));
  MAGPIE_RETURN_IF_ERROR(r.read_double("rtol", &rtol));
  for (const char* k : {"atol", "rtol"})
    if (const config_node* v = r.get(k); v && !((std::string(k) == "atol" ? atol : rtol) >= 0))
      return config_error(*v, std::string("correctness.") + k, "expected a tolerance >= 0, got " + v->text);
  if (backend == "accordo") {  // the accordo block's tolerances, unless atol/rtol are given directly
    if (atol < 0) atol = acc_atol;
    if (rtol < 0) rtol = acc_rtol;
  }
  for (tolerance* t : {&c->fp32, &c->fp16, &c->bf16, &c->fp64}) {
    if (atol >= 0) t->atol = atol;
    if (rtol >= 0) t->rtol = rtol;
  }
  if (const config_node* t = r.get("tolerances")) MAGPIE_RETURN_IF_ERROR(parse_tolerances(*t, "correctness.tolerances", c));
  MAGPIE_RETURN_IF_ERROR(r.read_bool("check_degenerate", &c->check_degenerate));
  MAGPIE_RETURN_IF_ERROR(r.read_bool("check_mutation", &c->check_mutation));
  MAGPIE_RETURN_IF_ERROR(r.read_double("timeout_seconds", &c->timeout_s));
  r.allow("iteration_count");
  return r.check_unknown();
}

status parse_timing(const config_node& n, timing_policy* t) {
  field_reader r(n, "performance.timing");
  int64_t v = t->warmup;
  MAGPIE_RETURN_IF_ERROR(r.read_int("warmup", &v));
  t->warmup = static_cast<int>(v);
  v = t->min_samples;
  MAGPIE_RETURN_IF_ERROR(r.read_int("min_samples", &v));
  t->min_samples = static_cast<int>(v);
  MAGPIE_RETURN_IF_ERROR(r.read_double("max_noise", &t->max_noise));
  MAGPIE_RETURN_IF_ERROR(r.read_double("min_time_s", &t->min_time_s));
  MAGPIE_RETURN_IF_ERROR(r.read_double("max_time_s", &t->max_time_s));
  MAGPIE_RETURN_IF_ERROR(r.read_bool("cold", &t->cold));
  v = t->batch;
  MAGPIE_RETURN_IF_ERROR(r.read_int("batch", &v));
  t->batch = static_cast<int>(v);
  MAGPIE_RETURN_IF_ERROR(r.read_int("max_samples", &t->max_samples));
  MAGPIE_RETURN_IF_ERROR(r.read_double("sample_timeout_s", &t->sample_timeout_s));
  MAGPIE_RETURN_IF_ERROR(r.read_double("setup_timeout_s", &t->setup_timeout_s));
  int64_t fb = 0;
  MAGPIE_RETURN_IF_ERROR(r.read_int("flush_bytes", &fb));
  t->flush_bytes = static_cast<uint64_t>(fb);
  v = t->processes;
  MAGPIE_RETURN_IF_ERROR(r.read_int("processes", &v));
  if (v < 1 || v > 16) return config_error(*n.get("processes"), "performance.timing.processes", "expected 1..16");
  t->processes = static_cast<int>(v);
  v = t->max_processes;
  MAGPIE_RETURN_IF_ERROR(r.read_int("max_processes", &v));
  if (v < t->processes || v > 64)
    return config_error(n.get("max_processes") ? *n.get("max_processes") : n, "performance.timing.max_processes",
                        strprintf("expected %d..64 (at least timing.processes)", t->processes));
  t->max_processes = static_cast<int>(v);
  MAGPIE_RETURN_IF_ERROR(r.read_bool("auto_batch", &t->auto_batch));
  v = t->checked_samples;
  MAGPIE_RETURN_IF_ERROR(r.read_int("checked_samples", &v));
  if (v < 2 || v > 64)
    return config_error(*n.get("checked_samples"), "performance.timing.checked_samples",
                        "expected 2..64 (the first and the last sample of every process are always checked)");
  t->checked_samples = static_cast<int>(v);
  // Each bad value names its own field (never a silent default or a harness error later).
  for (auto [key, bad, want] : {std::tuple{"warmup", t->warmup < 0, "an integer >= 0"},
                                {"min_samples", t->min_samples < 1, "an integer >= 1"},
                                {"batch", t->batch < 1, "an integer >= 1"},
                                {"max_samples", t->max_samples < 1, "an integer >= 1"},
                                {"max_time_s", !(t->max_time_s > 0), "seconds > 0"},
                                {"min_time_s", !(t->min_time_s >= 0), "seconds >= 0"},
                                {"max_noise", !(t->max_noise > 0), "a fraction > 0"},
                                {"sample_timeout_s", !(t->sample_timeout_s > 0), "seconds > 0"},
                                {"setup_timeout_s", !(t->setup_timeout_s > 0), "seconds > 0"}})
    if (bad) {
      const config_node* at = n.get(key);
      return config_error(at ? *at : n, std::string("performance.timing.") + key, std::string("expected ") + want);
    }
  return r.check_unknown();
}

status parse_performance(const config_node& n, perf_policy* p, timing_policy* t) {
  field_reader r(n, "performance");
  std::string backend;
  MAGPIE_RETURN_IF_ERROR(r.read_string("backend", &backend));
  if (!backend.empty()) {
    std::optional<profiler_backend> b = parse_profiler_backend(backend);
    if (!b)
      return config_error(*n.get("backend"), "performance.backend",
                          "expected ncu, rocprof_compute, metrix, cupti, none or auto");
    p->backend = *b;
  }
  MAGPIE_RETURN_IF_ERROR(r.read_double("timeout_seconds", &p->timeout_s));
  MAGPIE_RETURN_IF_ERROR(r.read_bool("enabled", &p->enabled));
  if (const config_node* ncu = r.get("ncu")) {
    field_reader nr(*ncu, "performance.ncu");
    MAGPIE_RETURN_IF_ERROR(nr.read_string_list("args", &p->ncu_args));
    MAGPIE_RETURN_IF_ERROR(nr.read_string_list("metrics", &p->ncu_metrics));
    MAGPIE_RETURN_IF_ERROR(nr.check_unknown());
  }
  r.allow("rocprof_compute");
  r.allow("metrix");
  if (const config_node* tn = r.get("timing")) MAGPIE_RETURN_IF_ERROR(parse_timing(*tn, t));
  return r.check_unknown();
}

status parse_compare(const config_node& n, compare_policy* c) {
  field_reader r(n, "compare");
  MAGPIE_RETURN_IF_ERROR(r.read_double("same_tolerance", &c->same_tolerance));
  MAGPIE_RETURN_IF_ERROR(r.read_double("confidence", &c->confidence));
  int64_t b = c->bootstrap_resamples;
  MAGPIE_RETURN_IF_ERROR(r.read_int("bootstrap_resamples", &b));
  c->bootstrap_resamples = static_cast<int>(b);
  MAGPIE_RETURN_IF_ERROR(r.read_string("winner_strategy", &c->winner_strategy));
  r.allow("perf_weights_rocprof");
  r.allow("perf_weights_ncu");
  r.allow("perf_weights_metrix");
  if (c->confidence <= 0 || c->confidence >= 1) return config_error(n, "compare.confidence", "expected 0 < confidence < 1");
  return r.check_unknown();
}

}  // namespace

status load_kernel_config(const fs::path& path, eval_request* req) {
  MAGPIE_ASSIGN_OR_RETURN(config_node root, load_yaml_file(path));
  if (root.is_null()) return invalid_argument("%s: the file is empty", path.c_str());
  path_context paths{fs::current_path(), absolute_path(path).parent_path()};
  field_reader r(root, "");
  if (const config_node* k = r.get("kernel")) {
    kernel_spec spec;
    MAGPIE_RETURN_IF_ERROR(parse_entry(*k, "kernel", paths, &spec));
    req->kernels.push_back(spec);
  }
  if (const config_node* ks = r.get("kernels")) {
    if (!ks->is_sequence()) return config_error(*ks, "kernels", "expected a list of kernel entries");
    for (size_t i = 0; i < ks->items.size(); ++i) {
      kernel_spec spec;
      MAGPIE_RETURN_IF_ERROR(parse_entry(ks->items[i], strprintf("kernels[%zu]", i), paths, &spec));
      req->kernels.push_back(spec);
    }
  }
  if (const config_node* ref = r.get("reference")) {
    kernel_spec spec;
    spec.id = "reference";
    MAGPIE_RETURN_IF_ERROR(parse_entry(*ref, "reference", paths, &spec));
    req->reference = spec;
  }
  if (const config_node* c = r.get("correctness")) MAGPIE_RETURN_IF_ERROR(parse_correctness(*c, &req->correctness));
  if (const config_node* p = r.get("performance"))
    MAGPIE_RETURN_IF_ERROR(parse_performance(*p, &req->performance, &req->timing));
  if (const config_node* c = r.get("compare")) MAGPIE_RETURN_IF_ERROR(parse_compare(*c, &req->compare));
  if (r.get("latency"))
    MAGPIE_LOG_WARN("%s: the latency section is accepted for compatibility; timing follows performance.timing",
                    path.c_str());
  r.allow("scheduler");   // sched::load_scheduler_sections
  r.allow("ray_config");
  r.allow("compiling");
  MAGPIE_RETURN_IF_ERROR(r.check_unknown());
  req->config_file = absolute_path(path).string();
  req->raw_config = config_node_json(root);
  return ok_status();
}

}  // namespace magpie::kernel
