// The schema of report.json (see report_schema.h). Field types follow the writers:
// trace_model::summary_json, read_stats::to_json, input_health_json, rules_json,
// analysis_json (analysis_output.cpp), gpu_spec::to_json, split_json / steps_json
// (report.cpp), step_annotation::to_json, phase_pick::to_json.
#include "trace/report_schema.h"

#include "core/json_schema.h"

namespace magpie::trace {

namespace {

using namespace schema;

json ints(std::initializer_list<const char*> keys, json props = json::object()) {
  for (const char* k : keys) props[k] = typed("integer", k);
  return props;
}

json nums(std::initializer_list<const char*> keys, json props = json::object()) {
  for (const char* k : keys) props[k] = typed("number", k);
  return props;
}

json read_stats_schema() {
  json p = ints({"file_bytes", "json_bytes", "events", "non_object_elements", "events_with_bad_fields", "events_bad_ts",
                 "events_bad_dur", "events_negative_dur", "events_bad_other", "error_offset"});
  p["path"] = typed("string", "file");
  p["gzip"] = typed("boolean", "gzip-compressed");
  p["root"] = words("JSON root", {"list", "object"});
  p["has_trace_events"] = typed("boolean", "a traceEvents array");
  p["complete"] = typed("boolean", "read to the end");
  p["error"] = typed("string", "why the read stopped ('' none)");
  p["seconds"] = typed("number", "read time, s");
  return closed(p);
}

json summary_schema() {
  json p = ints({"device_count", "events_kept", "cpu_ops", "runtime_events", "gpu_events", "annotations", "gpu_linked",
                 "gpu_unlinked", "gpu_linked_tracelens_rule", "gpu_without_cpu_op", "python_function_dropped",
                 "other_events_dropped", "events_without_ts_dropped", "gpu_events_without_dur", "negative_dur_set_to_zero",
                 "tree_bleeds_attached", "stream_overruns_clipped"});
  p["path"] = typed("string", "trace file");
  p["device_name"] = typed("string", "GPU named in the trace");
  p["linking_key"] = typed("string", "correlation | External id | none");
  p["read"] = read_stats_schema();
  return closed(p);
}

json roofline_schema() {
  json s = closed({{"compute_us", typed("number", "compute-bound time, us")},
                   {"memory_us", typed("number", "memory-bound time, us")},
                   {"roofline_time_us", typed("number", "max of the two, us")},
                   {"bound", typed("string", "compute | memory")}});
  s["type"] = {"object", "null"};
  return s;
}

json gpu_spec_schema() {
  json s = closed({{"name", typed("string", "GPU")},
                   {"mem_bw_gbps", typed("number", "memory bandwidth, GB/s")},
                   {"memory_gb", typed("number", "memory, GB")},
                   {"max_achievable_tflops", {{"type", "object"}, {"additionalProperties", typed("number", "TFLOP/s")},
                                              {"description", "compute spec -> TFLOP/s"}}},
                   {"_source", typed("string", "where the numbers come from")},
                   {"_key_source", {{"type", "object"}, {"additionalProperties", typed("string", "source")},
                                    {"description", "per key: its source"}}},
                   {"_reference", typed("string", "reference")}},
                  {"name", "mem_bw_gbps", "max_achievable_tflops"});
  s["type"] = {"object", "null"};
  return s;
}

json op_schema() {
  json p = ints({"operation_count", "num_kernels"},
                nums({"kernel_time_us_sum", "kernel_time_us_mean", "time_pct", "gflops"}));
  p["name"] = typed("string", "op");
  p["category"] = typed("string", "TraceLens category");
  p["has_perf_model"] = typed("boolean", "a perf model covers it");
  p["input_dims"] = typed("string", "Python repr");
  p["input_type"] = typed("string", "Python repr");
  for (const char* k : {"bytes", "flops_per_byte", "achieved_tflops_mean", "achieved_tbps_mean", "pct_roofline_mean"})
    p[k] = typed_or_null("number", k);
  p["compute_spec"] = typed("string", "matrix_bf16, vector ...");
  p["params"] = {{"type", "object"},
                 {"additionalProperties", {{"type", {"string", "number", "integer", "boolean", "null"}}}},
                 {"description", "the perf model's parameters (M, N, K, dtypes ...)"}};
  p["roofline"] = roofline_schema();
  p["note"] = typed("string", "perf model note");
  return closed(p, {"name", "category", "operation_count", "num_kernels", "kernel_time_us_sum", "time_pct",
                    "has_perf_model", "roofline"});
}

json kernel_schema() {
  json p = ints({"calls"}, nums({"total_us", "avg_us", "min_us", "max_us", "modelled_gflops", "modelled_bytes",
                                 "pct_roofline"}));
  p["name"] = typed("string", "kernel");
  p["category"] = typed("string", "category");
  p["top_op"] = typed("string", "op launching most of its time");
  p["achieved_tflops"] = typed_or_null("number", "TFLOP/s");
  p["achieved_tbps"] = typed_or_null("number", "TB/s");
  p["compute_spec"] = typed("string", "compute spec");
  p["roofline"] = roofline_schema();
  return closed(p, {"name", "category", "calls", "total_us", "avg_us", "min_us", "max_us", "top_op", "roofline"});
}

json analysis_schema() {
  json row = closed({{"type", typed("string", "computation_time, exposed_comm_time, busy_time, idle_time, ...")},
                     {"time ms", typed("number", "ms")},
                     {"percent", typed("number", "% of total")}});
  json comm = closed({{"total_ns", typed("integer", "ns")}, {"exposed_ns", typed("integer", "ns")},
                      {"overlapped_ns", typed("integer", "ns")}, {"overlapped_pct", typed("number", "%")}});
  return closed({{"gpu_timeline", list_of(row, "TraceLens GPU timeline breakdown")},
                 {"communication", comm},
                 {"kernel_category_busy_us", {{"type", "object"}, {"additionalProperties", typed("number", "us")},
                                              {"description", "category -> busy time, us"}}},
                 {"kernels_total_us", typed("number", "us")},
                 {"ops_kernel_time_us", typed("number", "us")},
                 {"unlinked_gpu_events", typed("integer", "GPU events without a CPU op")},
                 {"gpu_spec", gpu_spec_schema()},
                 {"ops", list_of(op_schema(), "ops, most time first")},
                 {"kernels", list_of(kernel_schema(), "kernels, most time first")}});
}

json annotation_schema() {
  json p = ints({"batch_size", "num_requests", "c_reqs", "c_sq", "c_sk", "c_sqsq", "c_sqsk", "g_reqs", "g_sq", "g_sk",
                 "g_sqsq", "g_sqsk"});
  p["format"] = typed("string", "vllm_detailed | vllm_native | sglang_detailed | sglang_native | atom");
  p["detailed"] = typed("boolean", "sk / sqsq / sqsk known");
  p["phase"] = typed("string", "prefilldecode | prefill_only | decode_only | idle");
  return closed(p);
}

json steps_schema() {
  json step = ints({"idx", "batch_size", "num_requests", "num_gpu_events"},
                   nums({"gpu_duration_us", "gpu_busy_us", "start_ts_us", "end_ts_us"}));
  step["name"] = typed("string", "step name");
  step["phase"] = typed("string", "prefilldecode | prefill_only | decode_only | idle | unknown");
  step["annotation"] = annotation_schema();
  json pick = ints({"batch_size", "phase_avg_conc", "num_gpu_events"}, nums({"gpu_duration", "gpu_busy_duration"}));
  pick["stage"] = typed("string", "prefilldecode | decode | prefill");
  pick["output_label"] = typed("string", "label");
  pick["selection_reason"] = typed("string", "why this step");
  pick["row_index"] = typed_or_null("integer", "step index (null: none picked)");
  pick["step_name"] = typed("string", "step name");
  json picked = closed(pick, {"stage", "output_label", "selection_reason", "row_index"});
  return closed({{"source", typed("string", "annotations | profiler_steps | forward_pattern | none")},
                 {"phase_method", typed("string", "how phases were told apart")},
                 {"notes", list_of(typed("string", "note"), "notes")},
                 {"steps", list_of(closed(step, {"idx", "name", "phase"}), "steps")},
                 {"undecided", typed_or_null("string", "why phases are unknown (null: decided)")},
                 {"phase_picks", closed({{"prefilldecode", picked}, {"decode", picked}, {"prefill", picked}})}});
}

json health_schema() {
  return closed({{"status", words("input health", {"ok", "partial", "unusable"})},
                 {"problems", list_of(typed("string", "problem"), "what is wrong with the input")}});
}

json string_list_or_null(const char* what) {
  json s = typed_or_null("array", what);
  s["items"] = typed("string", "entry");
  return s;
}

}  // namespace

json gap_analysis_schema() {
  json cfg = closed({{"enabled", typed("boolean", "on")}, {"trace_start_pct", typed("number", "%")},
                     {"trace_end_pct", typed("number", "%")}, {"top_k", typed("integer", "kernels kept")},
                     {"min_duration_us", typed("number", "us")}, {"categories", string_list_or_null("categories kept")},
                     {"ignore_categories", string_list_or_null("categories dropped")},
                     {"find_kernel_sources", typed("boolean", "source columns")},
                     {"kernel_source_repos", string_list_or_null("repository roots")},
                     {"auto_clone_repos", typed("boolean", "accepted, never cloned")},
                     {"repos_base_dir", typed_or_null("string", "accepted")}});
  json top = closed({{"name", typed("string", "kernel")}, {"calls", typed("integer", "calls")},
                     {"self_cuda_total_us", typed("number", "us")}, {"avg_time_us", typed("number", "us")},
                     {"pct_total", typed("number", "% of total")}, {"input_shapes", typed("string", "shapes")}});
  json rank = closed({{"rank", typed("integer", "rank")}, {"trace_file", typed("string", "file")},
                      {"total_duration_us", typed("number", "us")}, {"events_in_window", typed("integer", "events")},
                      {"events_counted", typed("integer", "events")}, {"events_without_dur", typed("integer", "events")},
                      {"input", health_schema()}, {"read", read_stats_schema()}});
  json s = closed({{"config", cfg}, {"total_duration_us", typed("number", "us")}, {"num_ranks", typed("integer", "ranks")},
                   {"top_kernels", list_of(top, "kernels by self time")},
                   {"clamped_trace_paths", list_of(typed("string", "file"), "clamped traces")},
                   {"errors", list_of(typed("string", "error"), "errors")}, {"ranks", list_of(rank, "per rank")},
                   {"warnings", list_of(typed("string", "warning"), "warnings")}, {"input", health_schema()},
                   {"discovery", typed("string", "which trace files were found")},
                   {"csv_path", typed_or_null("string", "gap_analysis.csv (null: no kernels)")},
                   {"output_dir", typed("string", "directory")}});
  s["type"] = {"object", "null"};
  s["description"] = "gap analysis (null: not run)";
  return s;
}

json trace_report_schema() {
  json rules = closed({{"mode", words("rule set", {"magpie", "tracelens"})},
                       {"gpu_timeline", typed("string", "which GPU events the timeline counts")},
                       {"gpu_timeline_events_excluded", typed("integer", "events left out by that rule")},
                       {"kernel_durations", typed("string", "how kernel durations are taken")},
                       {"host_tree", typed("string", "host tree rule")},
                       {"op_attribution", typed("string", "how kernel time is attributed to ops")}});
  return closed({{"trace", summary_schema()},
                 {"input", health_schema()},
                 {"rules", rules},
                 {"gpu_spec_choice", typed("string", "which GPU spec the roofline uses, or why none")},
                 {"analysis", analysis_schema()},
                 {"steps", steps_schema()},
                 {"output_files", list_of(typed("string", "file"), "files written")}},
                {"trace", "input", "output_files"});
}

}  // namespace magpie::trace
