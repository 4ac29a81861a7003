#include "sched/task_codec.h"

#include "core/strings.h"
#include "sched/options_codec.h"
#include "kernel/policy_printer.h"

namespace magpie::sched {

using namespace magpie::kernel;

namespace {

json argv_list_json(const argv_list& a) {
  json j = json::array();
  for (const auto& argv : a) j.push_back(argv);
  return j;
}

status read_argv_list(const json& j, const char* key, argv_list* out) {
  out->clear();
  if (!j.contains(key) || j[key].is_null()) return ok_status();
  if (!j[key].is_array()) return invalid_argument("task: '%s' must be a list of argv lists", key);
  for (const auto& argv : j[key]) {
    if (!argv.is_array()) return invalid_argument("task: '%s' must be a list of argv lists", key);
    std::vector<std::string> a;
    for (const auto& s : argv) {
      if (!s.is_string()) return invalid_argument("task: '%s' holds a non-string argument", key);
      a.push_back(s.get<std::string>());
    }
    out->push_back(std::move(a));
  }
  return ok_status();
}

std::vector<std::string> string_list(const json& j, const char* key) {
  std::vector<std::string> v;
  if (j.contains(key) && j[key].is_array())
    for (const auto& s : j[key])
      if (s.is_string()) v.push_back(s.get<std::string>());
  return v;
}

tolerance tolerance_from(const json& tols, const char* dtype, tolerance dflt) {
  if (!tols.is_object() || !tols.contains(dtype)) return dflt;
  return {json_number(tols[dtype], "atol", dflt.atol), json_number(tols[dtype], "rtol", dflt.rtol)};
}

correctness_policy correctness_from(const json& j) {
  correctness_policy c;
  c.method = parse_correctness_method(json_string(j, "method", "auto")).value_or(correctness_method::auto_select);
  c.trials = static_cast<int>(json_number(j, "trials", c.trials));
  if (j.contains("seed") && j["seed"].is_number_unsigned()) c.seed = j["seed"].get<uint64_t>();
  const json tols = j.contains("tolerances") ? j["tolerances"] : json::object();
  c.fp32 = tolerance_from(tols, "float32", c.fp32);
  c.fp16 = tolerance_from(tols, "float16", c.fp16);
  c.bf16 = tolerance_from(tols, "bfloat16", c.bf16);
  c.fp64 = tolerance_from(tols, "float64", c.fp64);
  c.check_degenerate = json_bool(j, "check_degenerate", c.check_degenerate);
  c.check_mutation = json_bool(j, "check_mutation", c.check_mutation);
  c.timeout_s = json_number(j, "timeout_seconds", c.timeout_s);
  return c;
}

timing_policy timing_from(const json& j) {
  timing_policy t;
  t.warmup = static_cast<int>(json_number(j, "warmup", t.warmup));
  t.min_samples = static_cast<int>(json_number(j, "min_samples", t.min_samples));
  t.max_noise = json_number(j, "max_noise", t.max_noise);
  t.min_time_s = json_number(j, "min_time_s", t.min_time_s);
  t.max_time_s = json_number(j, "max_time_s", t.max_time_s);
  t.cold = json_bool(j, "cold", t.cold);
  t.batch = static_cast<int>(json_number(j, "batch", t.batch));
  if (j.contains("max_samples") && j["max_samples"].is_number_integer()) t.max_samples = j["max_samples"].get<int64_t>();
  t.sample_timeout_s = json_number(j, "sample_timeout_s", t.sample_timeout_s);
  t.setup_timeout_s = json_number(j, "setup_timeout_s", t.setup_timeout_s);
  if (j.contains("flush_bytes") && j["flush_bytes"].is_number_unsigned()) t.flush_bytes = j["flush_bytes"].get<uint64_t>();
  t.processes = static_cast<int>(json_number(j, "processes", t.processes));
  t.max_processes = static_cast<int>(json_number(j, "max_processes", t.max_processes));
  t.auto_batch = json_bool(j, "auto_batch", t.auto_batch);
  t.checked_samples = static_cast<int>(json_number(j, "checked_samples", t.checked_samples));
  return t;
}

compare_policy compare_from(const json& j) {
  compare_policy c;
  c.same_tolerance = json_number(j, "same_tolerance", c.same_tolerance);
  c.confidence = json_number(j, "confidence", c.confidence);
  c.bootstrap_resamples = static_cast<int>(json_number(j, "bootstrap_resamples", c.bootstrap_resamples));
  c.winner_strategy = json_string(j, "winner_strategy", c.winner_strategy);
  return c;
}

perf_policy perf_from(const json& j) {
  perf_policy p;
  p.enabled = json_bool(j, "enabled", p.enabled);
  p.backend = parse_profiler_backend(json_string(j, "backend", "auto")).value_or(profiler_backend::auto_select);
  p.timeout_s = json_number(j, "timeout_seconds", p.timeout_s);
  p.ncu_args = string_list(j, "ncu_args");
  p.ncu_metrics = string_list(j, "ncu_metrics");
  return p;
}

}  // namespace

json kernel_spec_to_json(const kernel_spec& k) {
  json e = json::array();
  for (const auto& [name, value] : k.env) e.push_back({name, value});
  json j = {{"id", k.id},
            {"type", to_lower(kernel_type_name(k.type))},
            {"source_files", k.source_files},
            {"working_dir", k.working_dir.string()},
            {"env", e},
            {"compile_command", argv_list_json(k.compile_command)},
            {"testcase_command", argv_list_json(k.testcase_command)},
            {"prof_command", argv_list_json(k.prof_command)},
            {"get_inputs_func", k.get_inputs_func},
            {"get_init_inputs_func", k.get_init_inputs_func},
            {"entry", k.entry},
            {"inputs_from", k.inputs_from},
            {"origin", k.origin},
            {"expect_incorrect", k.expect_incorrect}};
  j["bench_target"] = k.target ? json{{"module", k.target->module}, {"callable", k.target->callable},
                                      {"get_inputs", k.target->get_inputs}}
                               : json(nullptr);
  return j;
}

status_or<kernel_spec> kernel_spec_from_json(const json& j) {
  if (!j.is_object() || !j.contains("id") || !j["id"].is_string())
    return invalid_argument("task: a kernel entry needs a string 'id'");
  kernel_spec k;
  k.id = j["id"].get<std::string>();
  if (!parse_kernel_type(json_string(j, "type", "hip"), &k.type))
    return invalid_argument("task: kernel '%s' has an unknown type '%s'", k.id.c_str(), json_string(j, "type").c_str());
  k.source_files = string_list(j, "source_files");
  k.working_dir = json_string(j, "working_dir");
  if (j.contains("env") && j["env"].is_array())
    for (const auto& kv : j["env"])
      if (kv.is_array() && kv.size() == 2 && kv[0].is_string() && kv[1].is_string())
        k.env.emplace_back(kv[0].get<std::string>(), kv[1].get<std::string>());
  MAGPIE_RETURN_IF_ERROR(read_argv_list(j, "compile_command", &k.compile_command));
  MAGPIE_RETURN_IF_ERROR(read_argv_list(j, "testcase_command", &k.testcase_command));
  MAGPIE_RETURN_IF_ERROR(read_argv_list(j, "prof_command", &k.prof_command));
  k.get_inputs_func = json_string(j, "get_inputs_func", k.get_inputs_func);
  k.get_init_inputs_func = json_string(j, "get_init_inputs_func", k.get_init_inputs_func);
  k.entry = json_string(j, "entry");
  k.inputs_from = json_string(j, "inputs_from");
  k.origin = json_string(j, "origin");
  k.expect_incorrect = json_bool(j, "expect_incorrect", false);  // YAML `expect: incorrect` (older tasks: absent)
  if (j.contains("bench_target") && j["bench_target"].is_object()) {
    const json& t = j["bench_target"];
    k.target = bench_target{json_string(t, "module"), json_string(t, "callable"), json_string(t, "get_inputs", "get_inputs")};
  }
  return k;
}

json request_to_json(const eval_request& req, const scheduler_options& so) {
  json ks = json::array();
  for (const auto& k : req.kernels) ks.push_back(kernel_spec_to_json(k));
  json c = correctness_policy_json(req.correctness);
  c["seed"] = req.correctness.seed ? json(*req.correctness.seed) : json(nullptr);
  json j = {{"mode", req.mode},
            {"kernels", ks},
            {"reference", req.reference ? kernel_spec_to_json(*req.reference) : json(nullptr)},
            {"baseline_index", req.baseline_index},
            {"correctness", c},
            {"timing", timing_policy_json(req.timing)},
            {"compare", compare_policy_json(req.compare)},
            {"performance", perf_policy_json(req.performance)},
            {"enable_default_compile", req.enable_default_compile},
            {"output_dir", req.output_dir.string()},
            {"config_file", req.config_file},
            {"raw_config", req.raw_config},
            {"scheduler", scheduler_options_json(so)}};
  return j;
}

status_or<eval_request> request_from_json(const json& j) {
  if (!j.is_object()) return invalid_argument("task: the request must be an object");
  eval_request req;
  auto mode = parse_run_mode(json_string(j, "mode", run_mode_name(req.mode)));
  if (!mode) return invalid_argument("task: 'mode' must be analyze, compare or reference");
  req.mode = *mode;
  if (!j.contains("kernels") || !j["kernels"].is_array()) return invalid_argument("task: 'kernels' must be a list");
  for (const auto& k : j["kernels"]) {
    MAGPIE_ASSIGN_OR_RETURN(kernel_spec spec, kernel_spec_from_json(k));
    req.kernels.push_back(std::move(spec));
  }
  if (j.contains("reference") && !j["reference"].is_null()) {
    MAGPIE_ASSIGN_OR_RETURN(kernel_spec ref, kernel_spec_from_json(j["reference"]));
    req.reference = std::move(ref);
  }
  req.baseline_index = static_cast<int>(json_number(j, "baseline_index", 0));
  if (j.contains("correctness")) req.correctness = correctness_from(j["correctness"]);
  if (j.contains("timing")) req.timing = timing_from(j["timing"]);
  if (j.contains("compare")) req.compare = compare_from(j["compare"]);
  if (j.contains("performance")) req.performance = perf_from(j["performance"]);
  req.enable_default_compile = json_bool(j, "enable_default_compile", false);
  req.output_dir = json_string(j, "output_dir", req.output_dir.string());
  req.config_file = json_string(j, "config_file");
  if (j.contains("raw_config")) req.raw_config = j["raw_config"];
  return req;
}

}  // namespace magpie::sched
