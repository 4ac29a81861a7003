#include "kernel/eval_schema.h"

#include "core/json_schema.h"
#include "core/states.h"
#include "kernel/integrity.h"

namespace magpie::kernel {

namespace {

json integrity_schema() {
  using namespace schema;
  json check = closed({{"name", typed("string", "check name, e.g. reference_inputs, timed_outputs, physical_floor")},
                       {"status", words("what the check found; fail rejects the kernel", check_status_names())},
                       {"detail", typed("string", "one line")},
                       {"data", typed("object", "what the check measured")}},
                      {"name", "status", "detail"});
  return closed({{"rejected", typed("boolean", "a check failed: the kernel is not ranked")},
                 {"reason", typed_or_null("string", "the first failed check's detail")},
                 {"checks", list_of(check, "every check the supervisor made")}});
}

}  // namespace

json kernel_eval_schema() {
  using namespace schema;
  auto state = [](const char* what) { return words(std::string("Magpie's ") + what, stage_state_names()); };
  auto stage = [](const char* what) {
    return typed_or_null("object", std::string("Magpie's ") + what + " {success, errors, ...} (null: the stage did not run)");
  };
  json props = {
      {"compiling_state", state("compiling_state")},
      {"correctness_state", state("correctness_state")},
      {"performance_state", state("performance_state")},
      {"latency_state", state("latency_state (always SKIPPED for kernels)")},
      {"errors", list_of(typed("string", "error"), "errors of the stages that failed")},
      {"score", typed("number", "Magpie's score: 0 compile failed, +0.5 correct, +0.5 timed")},
      {"compiling_result", stage("compiling_result")},
      {"correctness_result", stage("correctness_result")},
      {"performance_result", stage("performance_result")},
      {"latency_result", {{"type", "null"}, {"description", "Magpie's latency_result (kernels have none)"}}},
      {"extra", closed({{"kernel_id", typed("string", "kernel id")},
                        {"kernel_type", typed("string", "HIP | CUDA | PYTORCH | TRITON | HOST")}})},
      {"outcome", words("one word for the kernel", kernel_outcome_names())},
      {"correctness_method", words("how correctness was established (exit_code and none prove nothing numerically)",
                                   correctness_basis_names())},
      {"correctness", {{"type", "object"},
                       {"properties", {{"method", words("as correctness_method", correctness_basis_names())},
                                       {"policy", typed("object", "the correctness policy applied")}}},
                       {"description", "seeds, reference, sizes checked, comparison, failures"}}},
      {"timing", typed_or_null("object", "samples, statistics and stopping reason (null: not timed)")},
      {"integrity", integrity_schema()},
      {"kernel_config", typed("object", "the kernel entry as evaluated")}};
  return closed(props);
}

}  // namespace magpie::kernel
