#include "kernel/config_snapshot_printer.h"

#include "core/yaml_json.h"
#include "kernel/policy_printer.h"

namespace magpie::kernel {

json config_snapshot(const eval_request& req, bool compare, uint64_t run_seed) {
  json snap = {{"kernels", json::array()}};
  for (const auto& k : req.kernels) snap["kernels"].push_back(kernel_spec_json(k));
  if (req.reference) snap["reference"] = kernel_spec_json(*req.reference);
  snap["correctness"] = correctness_policy_json(req.correctness);
  snap["performance"] = perf_policy_json(req.performance);
  snap["performance"]["timing"] = timing_policy_json(req.timing);
  if (compare) snap["compare"] = compare_policy_json(req.compare);
  snap["run_seed"] = run_seed;
  return snap;
}

status write_config_snapshot(const fs::path& dir, const json& snapshot) {
  return write_file_atomic(dir / "config.yaml", json_to_yaml(snapshot));
}

}  // namespace magpie::kernel
