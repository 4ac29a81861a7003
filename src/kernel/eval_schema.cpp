#include "kernel/eval_schema.h"

#include "core/json_schema.h"
#include "core/states.h"
#include "core/strings.h"
#include "kernel/compare_printer.h"
#include "kernel/integrity.h"
#include "kernel/spec.h"

namespace magpie::kernel {

namespace {

using namespace schema;

/// A map name -> value of a scalar type (pass-through data another program wrote, e.g. an
/// integrity check's measurements).
json scalar_map(const std::string& description) {
  return {{"type", "object"},
          {"additionalProperties", {{"type", {"string", "number", "integer", "boolean", "null"}}}},
          {"description", description}};
}

json scalar_list(const std::string& description) {
  return list_of({{"type", {"string", "number", "integer", "boolean", "null"}}}, description);
}

/// An integrity check's data (integrity.cpp, the checks of evaluate.cpp / timing_checks.cpp): a
/// map of measurements (numbers, words, lists of numbers, a small object such as the held
/// reference), or for clock_bracket one row per harness process.
json check_data_schema() {
  const json scalar = {{"type", {"string", "number", "integer", "boolean", "null"}}};
  json value = {{"type", {"string", "number", "integer", "boolean", "null", "array", "object"}},
                {"items", scalar},
                {"additionalProperties", scalar}};
  json bracket_row = closed({{"process", typed("integer", "process")}, {"harness_median_ns", typed("number", "ns")},
                             {"bracket_minus_rtt_ns", typed("number", "ns")}, {"observed_ns", typed("number", "ns")},
                             {"over_bracket", typed("integer", "samples the harness over-reported")}});
  return {{"type", {"object", "array"}},
          {"additionalProperties", value},
          {"items", bracket_row},
          {"description", "what the check measured: name -> value, or (clock_bracket) one row per process"}};
}

json integrity_schema() {
  json check = closed({{"name", typed("string", "check name, e.g. reference_inputs, timed_outputs, physical_floor")},
                       {"status", words("what the check found; fail rejects the kernel", check_status_names())},
                       {"detail", typed("string", "one line")},
                       {"data", check_data_schema()}},
                      {"name", "status", "detail"});
  return closed({{"rejected", typed("boolean", "a check failed: the kernel is not ranked")},
                 {"reason", typed_or_null("string", "the first failed check's detail")},
                 {"checks", list_of(check, "every check the supervisor made")}});
}

json summary_ns_schema(const std::string& what) {  // core/stats summary_to_json
  json p = json::object();
  for (const char* k : {"median", "mean", "stdev", "min", "max", "p25", "p75", "iqr", "p5", "p95"})
    p[k] = typed("number", std::string(k) + ", ns");
  p["n"] = typed("integer", "samples");
  p["rel_stdev"] = typed("number", "stdev / mean");
  json s = closed(p);
  s["description"] = what;
  return s;
}

json duration_ns_schema() {
  json p = json::object();
  for (const char* k : {"avg", "min", "max", "total", "median"}) p[k] = typed("number", std::string(k) + ", ns");
  return closed(p);
}

/// One kernel of a profiler's view: CUPTI rows (mangled_name, grid, block) or ncu /
/// rocprof-compute rows (metrics).
json profiler_kernel_schema() {
  json metric = closed({{"value", {{"type", {"number", "string"}}, {"description", "value"}}},
                        {"unit", typed("string", "unit")}});
  return closed({{"kernel_name", typed("string", "kernel name (demangled where CUPTI could)")},
                 {"mangled_name", typed("string", "CUPTI: the mangled name")},
                 {"dispatch_count", typed("integer", "launches seen")},
                 {"duration_ns", duration_ns_schema()},
                 {"grid", list_of(typed("integer", "blocks"), "CUPTI: grid x, y, z")},
                 {"block", list_of(typed("integer", "threads"), "CUPTI: block x, y, z")},
                 {"metrics", {{"type", "object"},
                              {"additionalProperties", metric},
                              {"description", "ncu: metric name -> {value, unit}"}}}},
                {"kernel_name", "dispatch_count", "duration_ns"});
}

json value_unit_map(const std::string& description) {
  return {{"type", "object"},
          {"additionalProperties", closed({{"value", typed("number", "value")}, {"unit", typed("string", "unit")}})},
          {"description", description}};
}

json errors_or_null() {
  json s = typed_or_null("array", "error messages (null: none)");
  s["items"] = typed("string", "error");
  return s;
}

/// The order the timing rounds were taken in (timing.cpp / workers_timing.cpp measure_outcome::order).
json timing_order_schema() {
  json props = {{"policy", typed("string", "how rounds were ordered")},
                {"processes_per_kernel", typed("integer", "harness processes per kernel")},
                {"seed", typed("integer", "order seed")},
                {"checked_rounds", list_of(typed("integer", "round"), "rounds whose outputs were checked")},
                {"first_rounds", list_of(list_of(typed("string", "kernel#process"), "one round"), "the first rounds' order")}};
  json per_device_kernel = closed({{"kernel_id", typed("string", "kernel")}, {"ok", typed("boolean", "timed")},
                                   {"samples", typed("integer", "samples")}, {"median_ns", typed_or_null("number", "ns")},
                                   {"stop_reason", typed("string", "why sampling stopped")},
                                   {"speedup_vs_baseline", typed_or_null("number", "on this device")}});
  json device = closed({{"device", typed("string", "device id")},
                        {"processes", list_of(typed("integer", "process"), "its processes")},
                        {"order", closed(props, {"policy"})},
                        {"kernels", list_of(per_device_kernel, "per kernel on this device")}});
  json all = props;
  all["devices"] = list_of(device, "compare workers: one group per GPU");
  json s = closed(all, {"policy"});
  s["type"] = {"object", "null"};
  s["description"] = "how the timing rounds were ordered (null: nothing was timed)";
  return s;
}

json compiling_result_schema() {
  json s = closed({{"success", typed("boolean", "the stage succeeded")},
                   {"errors", errors_or_null()},
                   {"commands", list_of(typed("string", "command line"), "compile commands run")},
                   {"duration_s", typed("number", "compile time, s")}},
                  {"success", "errors"});
  s["type"] = {"object", "null"};
  s["description"] = "Magpie's compiling_result (null: the stage did not run)";
  return s;
}

json correctness_result_schema() {
  json s = closed({{"success", typed("boolean", "correct")}, {"errors", errors_or_null()}}, {"success", "errors"});
  s["type"] = {"object", "null"};
  s["description"] = "Magpie's correctness_result (null: the stage did not run)";
  return s;
}

json performance_result_schema() {
  json command = typed_or_null("array", "profiler command lines run");
  command["items"] = typed("string", "command line");
  json ncu = closed({{"success", typed("boolean", "ncu succeeded")},
                     {"errors", errors_or_null()},
                     {"command", command},
                     {"backend", typed("string", "ncu")},
                     {"kernels", list_of(profiler_kernel_schema(), "per kernel")},
                     {"state", words("the ncu pass", stage_state_names())},
                     {"cross_check", list_of(closed({{"kernel", typed("string", "kernel")},
                                                     {"cupti_median_ns", typed("number", "ns")},
                                                     {"ncu_median_ns", typed("number", "ns")},
                                                     {"diff_pct", typed("number", "(cupti - ncu) / ncu, %")}}),
                                             "CUPTI vs ncu medians")}},
                    {"state"});
  json s = closed({{"success", typed("boolean", "timed")},
                   {"errors", errors_or_null()},
                   {"command", command},
                   {"backend", typed("string", "cupti | harness timer | ncu | prof_command")},
                   {"summary", value_unit_map("kernel_time_median/mean/min/stdev/iqr (us), samples")},
                   {"kernels", list_of(profiler_kernel_schema(), "kernels the profiler saw")},
                   {"ncu", ncu},
                   {"stdout_tail", typed("string", "prof_command: the end of its output")},
                   {"workload_dir", typed("string", "CUPTI profile run: its directory")}},
                  {"success", "errors"});
  s["type"] = {"object", "null"};
  s["description"] = "Magpie's performance_result (null: the stage did not run)";
  return s;
}

json tensor_diff_schema() {
  json first = closed({{"index", typed("integer", "flat index")},
                       {"reference", typed_or_null("number", "reference value (null: not finite)")},
                       {"candidate", typed_or_null("number", "candidate value (null: not finite)")}});
  return closed({{"name", typed("string", "output")}, {"dtype", typed("string", "dtype")},
                 {"shape", list_of(typed("integer", "extent"), "shape")}, {"numel", typed("integer", "elements")},
                 {"mismatches", typed("integer", "elements outside atol + rtol*|ref|")},
                 {"nan_pattern_mismatches", typed("integer", "NaN/Inf positions that differ")},
                 {"max_abs_err", typed("number", "max |cand - ref|")}, {"mean_abs_err", typed("number", "mean |cand - ref|")},
                 {"max_rel_err", typed("number", "max relative error")}, {"mean_rel_err", typed("number", "mean relative error")},
                 {"atol", typed("number", "atol")}, {"rtol", typed("number", "rtol")}, {"first_mismatch", first}},
                {"name", "dtype", "shape", "numel", "mismatches"});
}

json correctness_verdict_schema() {
  json trial = closed({{"index", typed("integer", "trial")}, {"seed", typed("integer", "input seed")},
                       {"size", typed("string", "size label")}, {"passed", typed("boolean", "every output matched")},
                       {"failures", list_of(typed("string", "failure"), "why it failed")},
                       {"outputs", list_of(tensor_diff_schema(), "per output")}});
  return closed({{"passed", typed("boolean", "every trial passed")}, {"max_abs_err", typed("number", "over trials")},
                 {"max_rel_err", typed("number", "over trials")}, {"mean_abs_err", typed("number", "over trials")},
                 {"mean_rel_err", typed("number", "over trials")}, {"trials", list_of(trial, "per trial")}});
}

json correctness_block_schema() {
  return closed(
      {{"method", words("as correctness_method", correctness_basis_names())},
       {"policy", correctness_policy_schema()},
       {"run_seed", typed("integer", "the run's seed")},
       {"seeds", list_of(typed("integer", "seed"), "trial input seeds")},
       {"output_dir", typed("string", "the correctness run's directory")},
       {"reference", typed("string", "id of the reference compared against")},
       {"note", typed("string", "what the correctness basis means here")},
       {"harness", typed("string", "harness that wrote the manifest")},
       {"device", typed("string", "device the harness ran on")},
       {"n_sizes", typed("integer", "problem sizes the harness has")},
       {"timed_size", typed("integer", "size index that is timed")},
       {"sizes_checked", list_of(typed("integer", "size index"), "sizes among the trials")},
       {"bound_to", {{"type", "object"}, {"additionalProperties", typed("string", "value")},
                     {"description", "compare worker binding: variable -> device list"}}},
       {"comparison", correctness_verdict_schema()},
       {"failures", list_of(typed("string", "failure"), "correctness errors")}},
      {"method", "policy"});
}

}  // namespace

json kernel_spec_schema() {
  json argv = list_of(list_of(typed("string", "word"), "one argv"), "commands run in order (empty: none)");
  std::vector<std::string> types;
  for (auto t : {kernel_type::hip, kernel_type::cuda, kernel_type::pytorch, kernel_type::triton, kernel_type::host})
    types.push_back(to_lower(kernel_type_name(t)));
  return closed({{"kernel_id", typed("string", "kernel id")},
                 {"kernel_type", words("kernel type", types)},
                 {"source_files", list_of(typed("string", "absolute path"), "source files")},
                 {"working_dir", typed("string", "directory its commands run in")},
                 {"env", {{"type", "object"}, {"additionalProperties", typed("string", "value")},
                          {"description", "environment of its commands"}}},
                 {"compile_command", argv},
                 {"testcase_command", argv},
                 {"prof_command", argv},
                 {"bench_target", closed({{"module", typed("string", "Python module")},
                                          {"callable", typed("string", "class or function")},
                                          {"get_inputs", typed("string", "input factory")}})},
                 {"entry", typed("string", "Python class/callable")},
                 {"inputs_from", typed("string", "Python file with get_inputs")},
                 {"expect", words("the YAML's expect: this kernel is wrong on purpose", {"incorrect"})}},
                {"kernel_id", "kernel_type", "source_files", "working_dir", "env", "compile_command", "testcase_command",
                 "prof_command"});
}

json correctness_policy_schema() {
  json tol = closed({{"atol", typed("number", "absolute tolerance")}, {"rtol", typed("number", "relative tolerance")}});
  return closed({{"method", words("correctness method (policy)", {"auto", "outputs", "exit_code"})},
                 {"trials", typed("integer", "seeded trials")},
                 {"tolerances", closed({{"float32", tol}, {"float16", tol}, {"bfloat16", tol}, {"float64", tol}, {"integer", tol}})},
                 {"check_degenerate", typed("boolean", "reject degenerate outputs")},
                 {"check_mutation", typed("boolean", "detect input mutation")},
                 {"timeout_seconds", typed("number", "per correctness run, s")}});
}

json timing_policy_schema() {
  json p = json::object();
  for (const char* k : {"warmup", "min_samples", "batch", "max_samples", "flush_bytes", "processes", "max_processes", "checked_samples"})
    p[k] = typed("integer", k);
  for (const char* k : {"max_noise", "min_time_s", "max_time_s", "sample_timeout_s", "setup_timeout_s"}) p[k] = typed("number", k);
  p["cold"] = typed("boolean", "L2 flushed before each sample");
  p["auto_batch"] = typed("boolean", "warm runs of kernels under 10 us: launches per sample chosen from the pilot");
  return closed(p);
}

json compare_policy_schema() {
  return closed({{"same_tolerance", typed("number", "speedups within 1 +- this are 'same'")},
                 {"confidence", typed("number", "interval confidence")},
                 {"bootstrap_resamples", typed("integer", "resamples")},
                 {"winner_strategy", typed("string", "how the winner is picked")}});
}

json timing_result_schema() {
  json process = closed({{"process", typed("integer", "process index")}, {"samples", typed("integer", "samples")},
                         {"median_ns", typed("number", "ns")}, {"harness_median_ns", typed("number", "ns")},
                         {"ping_rtt_median_ns", typed("number", "ns")},
                         {"bracket_minus_rtt_median_ns", typed("number", "ns")},
                         {"observed_median_ns", typed("number", "ns")},
                         {"unclaimed_p10_ns", typed("number", "ns: bracket − time of record, per launch, 10th percentile")},
                         {"cpu_floor_excess_median_ns",
                          typed_or_null("number", "ns per launch, host clock: the sample's CPU floor (busiest thread, or the tree over every CPU) − time of record, median; null with a GPU timer")},
                         {"harness_over_bracket", typed("number", "ratio")},
                         {"channel", closed({{"samples_without_gpu_work", typed("integer", "count")},
                                             {"marks_outside_bracket", typed("integer", "count")},
                                             {"ops_outside_window", typed("integer", "count")},
                                             {"unexpected_marks", typed("integer", "count")},
                                             {"gpu_snapshots", typed("integer", "NVML snapshots with the tree stopped")},
                                             {"extra_gpu_holders", typed("integer", "distinct processes of the tree beyond one, and escaped ones charged to it, seen holding a GPU at any snapshot")},
                                             {"gpu_holders", typed("string", "pid (comm), ... of those processes; \"\" when none")}})},
                         {"supervisor_cost",
                          closed({{"samples", typed("integer", "samples")},
                                  {"commands", typed("integer", "commands sent")},
                                  {"per_sample_us",
                                   closed({{"wall", typed("number", "us: one_sample's wall time")},
                                           {"commands", typed("number", "us: commands' round trips")},
                                           {"proc_accounting", typed("number", "us: /proc walks for the tree's CPU time")},
                                           {"cupti", typed("number", "us: reading and attributing CUPTI records")},
                                           {"nvml", typed("number", "us: NVML snapshots")},
                                           {"outputs", typed("number", "us: reading and judging checked outputs")}})}})}});
  json check = closed({{"sample", typed("integer", "sample id")}, {"process", typed("integer", "process")},
                       {"passed", typed("boolean", "outputs matched")},
                       {"compared_with_reference", typed("boolean", "compared with the reference's outputs")},
                       {"elements_compared", typed("integer", "elements compared completely")}, {"failure", typed_or_null("string", "why")}});
  json ready = scalar_map("the harness's ready line (docs/harness-protocol.md: protocol, harness, device, timer, ...; "
                          "harnesses may add scalar keys)");
  json s = closed({{"success", typed("boolean", "timed")},
                   {"error", typed_or_null("string", "why not")},
                   {"policy", timing_policy_schema()},
                   {"source", typed("string", "cupti | the harness timer")},
                   {"stop_reason", typed("string", "why sampling stopped")},
                   {"samples", typed("integer", "samples")},
                   {"wall_seconds", typed("number", "s")},
                   {"stats_ns", summary_ns_schema("per-launch statistics, ns")},
                   {"harness_stats_ns", summary_ns_schema("the harness timer's statistics, ns")},
                   {"cross_check", closed({{"harness_median_ns", typed("number", "ns")},
                                           {"cupti_median_ns", typed("number", "ns")},
                                           {"harness_over_cupti", typed("number", "ratio")}})},
                   {"processes", list_of(process, "per harness process")},
                   {"sampling", closed({{"batch", typed("integer", "launches per sample of the counted processes")},
                                        {"batch_why", typed("string", "why that batch, and its effect on caches")},
                                        {"pilot_processes", typed("integer", "processes per implementation in the pilot")},
                                        {"planned_processes", typed("integer", "processes per implementation planned")},
                                        {"used_processes", typed("integer", "processes whose samples count")},
                                        {"pilot_sd", typed("number", "sd of log process medians in the pilot")},
                                        {"pilot_median_ns", typed("number", "median per launch in the pilot, ns")},
                                        {"why", typed("string", "how the processes were planned")}})},
                   {"checked_samples", list_of(check, "timed outputs checked")},
                   {"harness", ready},
                   {"cupti_kernels", list_of(profiler_kernel_schema(), "kernels CUPTI recorded")},
                   {"warnings", list_of(typed("string", "warning"), "warnings")}},
                  {"success", "error", "policy", "source", "stop_reason", "samples", "stats_ns"});
  s["type"] = {"object", "null"};
  s["description"] = "samples, statistics and stopping reason (null: not timed)";
  return s;
}

json kernel_eval_schema() {
  auto state = [](const char* what) { return words(std::string("Magpie's ") + what, stage_state_names()); };
  json props = {
      {"compiling_state", state("compiling_state")},
      {"correctness_state", state("correctness_state")},
      {"performance_state", state("performance_state")},
      {"latency_state", state("latency_state (always SKIPPED for kernels)")},
      {"errors", list_of(typed("string", "error"), "errors of the stages that failed")},
      {"score", typed("number", "Magpie's score: 0 compile failed, +0.5 correct, +0.5 timed")},
      {"compiling_result", compiling_result_schema()},
      {"correctness_result", correctness_result_schema()},
      {"performance_result", performance_result_schema()},
      {"latency_result", {{"type", "null"}, {"description", "Magpie's latency_result (kernels have none)"}}},
      {"extra", closed({{"kernel_id", typed("string", "kernel id")},
                        {"kernel_type", typed("string", "HIP | CUDA | PYTORCH | TRITON | HOST")}})},
      {"outcome", words("one word for the kernel", kernel_outcome_names())},
      {"correctness_method", words("how correctness was established (exit_code and none prove nothing numerically)",
                                   correctness_basis_names())},
      {"correctness", correctness_block_schema()},
      {"timing", timing_result_schema()},
      {"integrity", integrity_schema()},
      {"kernel_config", kernel_spec_schema()}};
  return closed(props);
}

json kernel_report_schema(const std::string& mode, const json& scheduler) {
  json entry = kernel_eval_schema();
  json summary_row = closed({{"kernel_id", typed("string", "kernel id")},
                             {"kernel_type", typed("string", "HIP | CUDA | PYTORCH | TRITON | HOST")},
                             {"compiling_state", words("state", stage_state_names())},
                             {"correctness_state", words("state", stage_state_names())},
                             {"performance_state", words("state", stage_state_names())},
                             {"latency_state", words("state", stage_state_names())},
                             {"score", typed("number", "score")},
                             {"outcome", words("outcome", kernel_outcome_names())},
                             {"correctness_method", words("basis", correctness_basis_names())},
                             {"kernel_time_median_us", typed("number", "median, us")}},
                            {"kernel_id", "kernel_type", "compiling_state", "correctness_state", "performance_state", "score",
                             "outcome"});
  json worker = closed({{"requested", typed("integer", "workers asked for")}, {"workers", typed("integer", "workers used")},
                        {"devices", scalar_list("device ids")},
                        {"variable", typed_or_null("string", "CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES")},
                        {"source", typed_or_null("string", "where the device list came from")},
                        {"notes", list_of(typed("string", "note"), "notes")},
                        {"reason", typed_or_null("string", "why fewer workers")}});
  json compare_results = kernel::compare_result_schema();
  json& cp = compare_results["properties"];
  cp["kernel_results"] = list_of(entry, "per kernel (an analyze entry)");
  cp["reference"] = typed("string", "id of the kernel every output was compared with");
  cp["compare_policy"] = compare_policy_schema();
  cp["timing_policy"] = timing_policy_schema();
  cp["timing_order"] = timing_order_schema();
  cp["workers"] = worker;
  cp["summary"] = typed("string", "comparison summary text");
  cp["phases"] = closed({{"compile_s", typed("number", "compiling every implementation (in parallel), s")},
                         {"correctness_s", typed("number", "the correctness runs (reference first), s")},
                         {"timing_s", typed("number", "timing and profiler stages, s")},
                         {"other_s", typed("number", "workspace, detection, verdicts, report, s")},
                         {"total_s", typed("number", "the compare's wall time, s")}});
  compare_results["additionalProperties"] = false;
  compare_results["required"] = {"kernel_results", "comparison_metrics", "winner", "rankings", "verdicts", "summary"};
  json results;
  if (mode == "analyze") results = list_of(entry, "one entry per kernel");
  else if (mode == "compare") results = compare_results;
  else {
    results = compare_results;
    results["type"] = {"object", "array"};
    results["items"] = entry;
    results["description"] = "analyze: one entry per kernel; compare: the comparison";
  }
  json reference = entry;
  reference["type"] = {"object", "null"};
  reference["description"] = "the reference's entry (null: none)";
  json props = {{"mode", words("run mode", {"analyze", "compare"})},
                {"timestamp", typed("string", "YYYYmmdd_HHMMSS")},
                {"magpie_version", typed("string", "version+commit")},
                {"config_file", typed_or_null("string", "kernel YAML")},
                {"gpu_arch", typed_or_null("string", "sm_90, gfx942 ... (null: no GPU)")},
                {"cupti_injection", typed_or_null("string", "libmagpie_cupti.so used for timing")},
                {"run_seed", typed("integer", "the run's seed")},
                {"reference", reference},
                {"external_reference", closed({{"id", typed("string", "reference id")},
                                               {"manifest_dir", typed_or_null("string", "its manifest")},
                                               {"correctness_method", words("basis", correctness_basis_names())},
                                               {"failure", typed_or_null("string", "why it failed")}})},
                {"summary", list_of(summary_row, "one row per kernel")},
                {"results", results}};
  if (!scheduler.is_null()) props["scheduler"] = scheduler;
  return closed(props, {"mode", "timestamp", "run_seed", "summary", "results"});
}

}  // namespace magpie::kernel
