#include "kernel/policy_printer.h"

#include "core/strings.h"

namespace magpie::kernel {

namespace {
json argv_json(const argv_list& a) {
  json j = json::array();
  for (const auto& argv : a) j.push_back(argv);
  return j;
}
}  // namespace

json kernel_spec_json(const kernel_spec& s) {
  json j;
  j["kernel_id"] = s.id;
  j["kernel_type"] = to_lower(kernel_type_name(s.type));
  j["source_files"] = s.source_files;
  j["working_dir"] = s.working_dir.string();
  json e = json::object();
  for (const auto& [k, v] : s.env) e[k] = v;
  j["env"] = e;
  j["compile_command"] = argv_json(s.compile_command);
  j["testcase_command"] = argv_json(s.testcase_command);
  j["prof_command"] = argv_json(s.prof_command);
  if (s.target) j["bench_target"] = {{"module", s.target->module}, {"callable", s.target->callable}, {"get_inputs", s.target->get_inputs}};
  if (!s.entry.empty()) j["entry"] = s.entry;
  if (s.expect_incorrect) j["expect"] = "incorrect";
  if (!s.inputs_from.empty()) j["inputs_from"] = s.inputs_from;
  return j;
}

json correctness_policy_json(const correctness_policy& p) {
  auto tol = [](const tolerance& t) { return json{{"atol", t.atol}, {"rtol", t.rtol}}; };
  return {{"method", correctness_method_name(p.method)}, {"trials", p.trials},
          {"tolerances", {{"float32", tol(p.fp32)}, {"float16", tol(p.fp16)}, {"bfloat16", tol(p.bf16)}, {"float64", tol(p.fp64)},
                          {"integer", tol({0, 0})}}},
          {"check_degenerate", p.check_degenerate}, {"check_mutation", p.check_mutation}, {"timeout_seconds", p.timeout_s}};
}

json timing_policy_json(const timing_policy& p) {
  return {{"warmup", p.warmup}, {"min_samples", p.min_samples}, {"max_noise", p.max_noise}, {"min_time_s", p.min_time_s},
          {"max_time_s", p.max_time_s}, {"cold", p.cold}, {"batch", p.batch}, {"max_samples", p.max_samples},
          {"sample_timeout_s", p.sample_timeout_s}, {"setup_timeout_s", p.setup_timeout_s}, {"flush_bytes", p.flush_bytes},
          {"processes", p.processes}, {"max_processes", p.max_processes}, {"auto_batch", p.auto_batch},
          {"checked_samples", p.checked_samples}};
}

json compare_policy_json(const compare_policy& p) {
  return {{"same_tolerance", p.same_tolerance}, {"confidence", p.confidence},
          {"bootstrap_resamples", p.bootstrap_resamples}, {"winner_strategy", p.winner_strategy}};
}

json perf_policy_json(const perf_policy& p) {
  return {{"enabled", p.enabled}, {"backend", profiler_backend_name(p.backend)},
          {"timeout_seconds", p.timeout_s}, {"ncu_args", p.ncu_args}, {"ncu_metrics", p.ncu_metrics}};
}

}  // namespace magpie::kernel
